// The chat: `useChat` from @ai-sdk/react over DefaultChatTransport against the YouYou server's /ui/chat route,
// unchanged. Everything a model or tool sends is rendered as React text (never as HTML), after control
// characters are made visible.
import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  getToolOrDynamicToolName,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
} from 'ai';
import { useEffect, useMemo, useState } from 'react';

// biome-ignore lint/suspicious/noControlCharactersInRegex: making control characters visible is its job.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Makes control characters (ESC, C1, bidi overrides) visible instead of letting them act. */
export function visible(text) {
  return String(text).replace(CONTROL, (character) => {
    const code = character.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

const savedKey = (sessionId) => `youyou.react-chat.messages.${sessionId}`;

/** The messages this tab showed for the session before a reload (the server keeps the real history). */
function savedMessages(sessionId) {
  try {
    const saved = JSON.parse(sessionStorage.getItem(savedKey(sessionId)) ?? '[]');
    // Anything else in the slot (another app's, an edited one) is left out rather than drawn.
    return Array.isArray(saved)
      ? saved.filter(
          (message) =>
            typeof message?.id === 'string' &&
            (message.role === 'user' || message.role === 'assistant') &&
            Array.isArray(message.parts) &&
            message.parts.every((part) => typeof part?.type === 'string'),
        )
      : [];
  } catch {
    return [];
  }
}

/** Whether this tab kept messages of the session (a reload); a new tab has none and loads the history. */
export function hasSavedMessages(sessionId) {
  return savedMessages(sessionId).length > 0;
}

/** What a tool part's state means to the reader. */
const TOOL_STATE = {
  'input-streaming': 'preparing',
  'input-available': 'running',
  'approval-requested': 'waiting for approval',
  'output-available': 'done',
  'output-error': 'failed',
  'output-denied': 'denied',
};

/** The chat of one session: its messages, a form to send, Stop, and Approve / Deny for held tool calls. */
export function App({ api, token, sessionId, history = [], onNewChat }) {
  const transport = useMemo(
    () => new DefaultChatTransport({ api: `${api}/ui/chat`, headers: { Authorization: `Bearer ${token}` } }),
    [api, token],
  );
  const [initialMessages] = useState(() => {
    const saved = savedMessages(sessionId);
    return saved.length > 0 ? saved : history;
  });
  const { messages, sendMessage, status, error, stop, addToolApprovalResponse } = useChat({
    id: sessionId,
    messages: initialMessages,
    transport,
    // Sends the answers to held calls once every call of the batch has one; the server continues the turn.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    // After a reload, GET /ui/chat/:id/stream replays a turn still running (204 when none runs).
    resume: true,
  });
  const [input, setInput] = useState('');
  const [stopError, setStopError] = useState('');

  // Kept per tab so a reload shows the conversation; a replayed turn replaces its message (same id).
  useEffect(() => {
    try {
      sessionStorage.setItem(savedKey(sessionId), JSON.stringify(messages));
    } catch {
      // A full storage only means a reload shows less; the chat goes on.
    }
  }, [sessionId, messages]);

  const running = status === 'submitted' || status === 'streaming';

  const onSubmit = (event) => {
    event.preventDefault();
    const text = input.trim();
    if (text === '' || running) return;
    setInput('');
    setStopError('');
    void sendMessage({ text });
  };

  // stop() only drops this tab's stream (the server's turn runs on, as after a reload, so that it can be
  // resumed); the cancel route ends the turn itself.
  const onStop = async () => {
    setStopError('');
    const cancelled = fetch(`${api}/sessions/${encodeURIComponent(sessionId)}/cancel`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
    });
    await stop();
    try {
      const response = await cancelled;
      if (!response.ok) setStopError(`the turn could not be cancelled (HTTP ${response.status})`);
    } catch {
      setStopError('the turn could not be cancelled: the server did not answer');
    }
  };

  return (
    <div className="chat" data-status={status}>
      <header>
        <strong>YouYou</strong>
        <span className="session">session {sessionId}</span>
        <span className="status">{status}</span>
        <button type="button" onClick={onNewChat} disabled={running}>
          New chat
        </button>
      </header>
      <ol id="transcript">
        {messages.map((message) => (
          <li key={message.id} className={`message ${message.role}`}>
            {message.parts.map((part, index) => (
              <Part
                // Parts are only appended or updated in place, so their index is a stable key.
                // biome-ignore lint/suspicious/noArrayIndexKey: see above.
                key={index}
                part={part}
                onAnswer={(answer) => void addToolApprovalResponse(answer)}
              />
            ))}
          </li>
        ))}
      </ol>
      {error !== undefined || stopError !== '' ? (
        <p id="error" role="alert">
          {visible(stopError !== '' ? stopError : error.message)}
        </p>
      ) : null}
      <form onSubmit={onSubmit}>
        <input
          id="message"
          aria-label="Message"
          value={input}
          onChange={(event) => setInput(event.target.value)}
          placeholder="Ask something"
          autoComplete="off"
        />
        <button id="send" type="submit" disabled={running}>
          Send
        </button>
        <button id="stop" type="button" onClick={() => void onStop()} disabled={!running}>
          Stop
        </button>
      </form>
    </div>
  );
}

/** One part of a message: text, reasoning or a tool call; step markers and others show nothing. */
function Part({ part, onAnswer }) {
  if (part.type === 'text') return <p className="text">{visible(part.text)}</p>;
  if (part.type === 'reasoning') return <p className="reasoning">{visible(part.text)}</p>;
  if (isToolUIPart(part)) return <ToolPart part={part} onAnswer={onAnswer} />;
  return null;
}

/** A tool call with its state; while it waits for approval, Approve and Deny (with an optional reason). */
function ToolPart({ part, onAnswer }) {
  const [reason, setReason] = useState('');
  const name = getToolOrDynamicToolName(part);
  const answered = part.approval?.approved;
  const label =
    part.state === 'approval-responded'
      ? answered
        ? 'approved'
        : 'denied'
      : (TOOL_STATE[part.state] ?? part.state);
  const result =
    part.state === 'output-available'
      ? ` → ${typeof part.output === 'string' ? part.output : JSON.stringify(part.output)}`
      : part.state === 'output-error'
        ? ` → ${part.errorText}`
        : '';
  return (
    <div className="tool" data-state={part.state} data-call-id={part.toolCallId}>
      <code>{visible(`${name}(${JSON.stringify(part.input ?? {})})${result}`)}</code>
      <span className="tool-state">{label}</span>
      {part.state === 'approval-requested' ? (
        <span className="approval">
          <button
            type="button"
            className="approve"
            onClick={() => onAnswer({ id: part.approval?.id ?? part.toolCallId, approved: true })}
          >
            Approve
          </button>
          <input
            className="reason"
            aria-label="Reason to deny"
            placeholder="reason (optional)"
            value={reason}
            onChange={(event) => setReason(event.target.value)}
          />
          <button
            type="button"
            className="deny"
            onClick={() =>
              onAnswer({
                id: part.approval?.id ?? part.toolCallId,
                approved: false,
                ...(reason.trim() === '' ? {} : { reason: reason.trim() }),
              })
            }
          >
            Deny
          </button>
        </span>
      ) : null}
    </div>
  );
}
