// A session's stored history (GET /sessions/:id/messages) as the UI messages `useChat` draws, so a chat opened
// in a new tab (no messages kept in its sessionStorage) shows the whole conversation, not an empty page.

const textOf = (content) =>
  (Array.isArray(content) ? content : [])
    .filter((block) => block?.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text)
    .join('');

/**
 * The UI messages of a stored history: a user message per user turn; the assistant's text and tool calls
 * until the next user message as one assistant message, its tools as `dynamic-tool` parts in the state their
 * result gives (held calls, `pendingApprovals`, as waiting for approval). When `turnRunning`, what the running
 * turn has stored after its user message is left out: `resume` replays that turn whole.
 */
export function historyToUiMessages({ messages, pendingApprovals = [], turnRunning = false }) {
  const stored = Array.isArray(messages) ? messages : [];
  const lastUser = stored.findLastIndex((message) => message?.type === 'user');
  const shown = turnRunning && lastUser !== -1 ? stored.slice(0, lastUser + 1) : stored;
  const held = new Set(pendingApprovals.map((call) => call?.callId));
  const uiMessages = [];
  let assistant;
  const tools = new Map();
  for (const [index, message] of shown.entries()) {
    if (message?.type === 'user') {
      assistant = undefined;
      uiMessages.push({
        id: `stored-${index}`,
        role: 'user',
        parts: [{ type: 'text', text: textOf(message.content) }],
      });
      continue;
    }
    if (assistant === undefined && ['assistant', 'tool_call'].includes(message?.type)) {
      assistant = { id: `stored-${index}`, role: 'assistant', parts: [] };
      uiMessages.push(assistant);
    }
    if (message?.type === 'assistant') {
      const text = textOf(message.content);
      if (text !== '') assistant.parts.push({ type: 'text', text, state: 'done' });
    } else if (message?.type === 'tool_call') {
      const part = {
        type: 'dynamic-tool',
        toolName: String(message.toolName),
        toolCallId: String(message.callId),
        state: held.has(message.callId) ? 'approval-requested' : 'input-available',
        input: message.arguments ?? {},
        ...(held.has(message.callId) ? { approval: { id: String(message.callId) } } : {}),
      };
      tools.set(message.callId, part);
      assistant.parts.push(part);
    } else if (message?.type === 'tool_result') {
      const part = tools.get(message.callId);
      if (part === undefined) continue;
      if (message.isError) Object.assign(part, { state: 'output-error', errorText: String(message.content) });
      else Object.assign(part, { state: 'output-available', output: String(message.content) });
    }
  }
  return uiMessages;
}

/** Reads the session's stored history and whether a turn runs now; on any failure, no messages. */
export async function loadHistory({ api, token, sessionId }) {
  const headers = { Authorization: `Bearer ${token}` };
  const path = `${api}/sessions/${encodeURIComponent(sessionId)}`;
  try {
    const [history, status] = await Promise.all([
      fetch(`${path}/messages`, { headers }).then((response) => (response.ok ? response.json() : undefined)),
      fetch(path, { headers }).then((response) => (response.ok ? response.json() : undefined)),
    ]);
    if (history === undefined) return [];
    return historyToUiMessages({ ...history, turnRunning: status?.turnRunning === true });
  } catch {
    return [];
  }
}
