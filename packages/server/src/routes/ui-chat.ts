import type { ContentBlock, RunningTurn, Session, TurnRunOptions } from '@youyou/agent';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { onlyKeys, readJsonObject } from '../http/body.js';
import type { TenantContext } from '../http/context.js';
import { HttpError } from '../http/errors.js';
import { eventOf, type JournalEntry } from '../sessions/journal.js';
import { type RouteGroup, SESSION_ID } from './route-deps.js';
import { UI_MESSAGE_STREAM_HEADER, type UiMessageChunk, UiMessageStreamMapper } from './ui-message-stream.js';

function invalid(message: string): HttpError {
  return new HttpError({ status: 400, code: 'INVALID_INPUT', message });
}

/**
 * Mounts the AI SDK UI message stream routes, so `useChat` from `@ai-sdk/react` (its `DefaultChatTransport`
 * with `api: '<server>/ui/chat'`) talks to the agent unchanged: `POST /ui/chat` runs a turn on the session
 * whose id is the chat id, `GET /ui/chat/:id/stream` (the transport's reconnect) replays the running turn.
 */
export const uiChatRoutes: RouteGroup = (app, deps) => {
  const { hub, keepAliveMs, turnOptionsOf } = deps;

  const owned = async (context: TenantContext, sessionId: unknown) => {
    if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) {
      throw new HttpError({ status: 404, code: 'SESSION_NOT_FOUND', message: 'no such session' });
    }
    await hub.authorize(context.get('tenant'), sessionId);
    return sessionId;
  };

  app.post('/ui/chat', async (context) => {
    const body = await readJsonObject(context);
    onlyKeys(body, ['id', 'messages', 'trigger', 'messageId']);
    const sessionId = await owned(context, body.id);
    if (body.trigger !== undefined && body.trigger !== 'submit-message') {
      throw invalid(
        "only trigger 'submit-message' is supported: the session keeps its history, so regenerating is sending again",
      );
    }
    const last = lastMessage(body.messages);
    const session = await hub.session(sessionId);
    const journal = hub.journal(sessionId);
    const after = journal.lastSequence;
    const turnOptions = await turnOptionsOf(context.get('tenant'));
    const turn =
      last.role === 'user'
        ? await (hub.isContinuation(session.currentTurn)
            ? session.followUp({ content: userContent(last.parts) })
            : session.sendMessage({ content: userContent(last.parts) }, turnOptions))
        : await continueAfterApprovals({ session, parts: last.parts, turnOptions });
    hub.track(sessionId, turn);
    return streamUiTurn({
      context,
      entries: journal,
      after,
      turnId: turn.turnId,
      continued: last.role === 'assistant',
      keepAliveMs,
    });
  });

  app.get('/ui/chat/:id/stream', async (context) => {
    const sessionId = await owned(context, context.req.param('id'));
    // With automatic continuing, a client that reconnects to a session whose turn a crash cut sees it go on.
    await hub.takeForFollower(sessionId);
    const turn: RunningTurn | undefined = hub.activeSession(sessionId)?.currentTurn;
    if (turn === undefined) return context.body(null, 204);
    const journal = hub.journal(sessionId);
    // The transport replays the response message from its start, and the client replaces the message it had
    // with the replayed one (same id, the turn's): the replay is the whole turn, from its first kept event.
    // A running turn that was suspended has been continued since: its suspensions are not the end of the
    // message, so they are left out (the held calls' parts come with the continuation's tool events).
    const ownEvents = journal.since(0).filter((entry) => entry.turnId === turn.turnId);
    const first = ownEvents[0];
    const continuedSuspensions = ownEvents.findLast((entry) => entry.type === 'turn_suspended')?.sequence;
    return streamUiTurn({
      context,
      entries: journal,
      after: first === undefined ? journal.lastSequence : first.sequence - 1,
      turnId: turn.turnId,
      continued: false,
      ...(continuedSuspensions === undefined ? {} : { continuedSuspensions }),
      keepAliveMs,
    });
  });
};

interface UiMessage {
  role: 'user' | 'assistant';
  parts: unknown[];
}

/** The last message of the request: the one the client just added (a user message or approval answers). */
function lastMessage(messages: unknown): UiMessage {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalid("'messages' must be a non-empty array of UI messages");
  }
  const last: unknown = messages[messages.length - 1];
  if (typeof last !== 'object' || last === null) throw invalid('the last message must be an object');
  const { role, parts } = last as { role?: unknown; parts?: unknown };
  if ((role !== 'user' && role !== 'assistant') || !Array.isArray(parts)) {
    throw invalid(
      "the last message must have role 'user' (or 'assistant' with approval answers) and 'parts'",
    );
  }
  return { role, parts };
}

/** A user message's text parts (and images as data URLs) as the agent's content blocks. */
function userContent(parts: unknown[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const part of parts) {
    if (typeof part !== 'object' || part === null) throw invalid('a message part must be an object');
    const typed = part as { type?: unknown; text?: unknown; url?: unknown; mediaType?: unknown };
    if (typed.type === 'text' && typeof typed.text === 'string') {
      blocks.push({ type: 'text', text: typed.text });
    } else if (
      typed.type === 'file' &&
      typeof typed.url === 'string' &&
      typeof typed.mediaType === 'string'
    ) {
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(typed.url);
      if (match === null || !typed.mediaType.startsWith('image/')) {
        throw invalid('a file part must be an image given as a base64 data: URL');
      }
      blocks.push({ type: 'image', mediaType: match[1] ?? typed.mediaType, data: match[2] ?? '' });
    }
    // Other parts (step markers, sources, data parts) carry nothing the model should read.
  }
  if (blocks.length === 0) throw invalid('the user message has no text or image part');
  return blocks;
}

/**
 * An assistant message whose tool parts carry approval answers (`addToolApprovalResponse`): each answer is
 * given to the session and the suspended turn continues. The decisions come only from parts in state
 * `approval-responded`; a call the session does not hold is refused by the session (INVALID_INPUT).
 */
async function continueAfterApprovals(options: {
  session: Session;
  parts: unknown[];
  turnOptions: TurnRunOptions | undefined;
}): Promise<RunningTurn> {
  const { session, parts, turnOptions } = options;
  let answered = 0;
  for (const part of parts) {
    if (typeof part !== 'object' || part === null) continue;
    const typed = part as { state?: unknown; toolCallId?: unknown; approval?: unknown };
    if (typed.state !== 'approval-responded' || typeof typed.toolCallId !== 'string') continue;
    const approval = typed.approval as { approved?: unknown; reason?: unknown } | undefined;
    if (typeof approval?.approved !== 'boolean')
      throw invalid('an approval answer must say approved: true or false');
    const held = session.pendingApprovals().find((call) => call.callId === typed.toolCallId);
    if (held === undefined) continue;
    answered += 1;
    // An answer after the approval window comes too late to count: continue() denies the call.
    if (held.expiresAt !== undefined && Date.parse(held.expiresAt) <= Date.now()) continue;
    if (approval.approved) await session.approve(typed.toolCallId);
    else
      await session.deny(typed.toolCallId, typeof approval.reason === 'string' ? approval.reason : undefined);
  }
  if (answered === 0)
    throw invalid('the last message is an assistant message without an answer to a held call');
  // INVALID_INPUT (400) from the session while other calls of the batch still wait for an answer.
  return await session.continue(turnOptions);
}

/** Streams one turn's journal entries after `after` as UI message chunks, then `[DONE]`. */
function streamUiTurn(options: {
  context: Context;
  entries: {
    subscribe(
      after: number,
      listener: (entry: JournalEntry) => void,
    ): { backlog: JournalEntry[]; unsubscribe: () => void };
  };
  after: number;
  turnId: string;
  /** The turn continues after approval answers: the client's message goes on. */
  continued: boolean;
  /** The turn's `turn_suspended` events up to this sequence were continued: a replay passes over them. */
  continuedSuspensions?: number;
  keepAliveMs: number;
}): Response {
  const { context, turnId } = options;
  context.header(UI_MESSAGE_STREAM_HEADER, 'v1');
  return streamSSE(context, async (stream) => {
    const mapper = new UiMessageStreamMapper();
    const queue: JournalEntry[] = [];
    let wake: (() => void) | undefined;
    const { backlog, unsubscribe } = options.entries.subscribe(options.after, (entry) => {
      queue.push(entry);
      wake?.();
    });
    queue.unshift(...backlog);
    let aborted = false;
    stream.onAbort(() => {
      aborted = true;
      wake?.();
    });
    const keepAlive = setInterval(() => {
      stream.write(': keep-alive\n\n').catch(() => undefined);
    }, options.keepAliveMs);
    const send = async (chunks: UiMessageChunk[]): Promise<void> => {
      for (const chunk of chunks) await stream.writeSSE({ data: JSON.stringify(chunk) });
    };
    try {
      await send(mapper.start({ turnId, continued: options.continued }));
      while (!aborted && !mapper.done) {
        const entry = queue.shift();
        if (entry === undefined) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        if (entry.turnId !== turnId) continue;
        const passedOver =
          entry.type === 'turn_suspended' && entry.sequence <= (options.continuedSuspensions ?? 0);
        if (!passedOver) await send(mapper.map(eventOf(entry)));
      }
      if (!aborted) await stream.writeSSE({ data: '[DONE]' });
    } finally {
      clearInterval(keepAlive);
      unsubscribe();
    }
  });
}
