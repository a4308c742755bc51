import type { ContentBlock, MessageStatus } from '../kernel/types.js';

/** One persisted event of a session's log. */
export interface SessionEvent {
  timestamp: Date;
  payload: SessionEventPayload;
}

/**
 * What the log holds: the messages as they entered the context, plus metadata. `turnId` marks the messages that
 * open a turn (its input, and the system messages injected just before it), so a rewind or a fork finds the turn.
 */
export type SessionEventPayload =
  | { type: 'user_message'; content: ContentBlock[]; turnId?: string }
  | { type: 'assistant_message'; content: ContentBlock[]; status: MessageStatus }
  | { type: 'tool_call'; callId: string; toolName: string; arguments: unknown }
  | { type: 'tool_result'; callId: string; content: string; isError: boolean }
  | { type: 'system_message'; content: string; turnId?: string }
  | { type: 'metadata'; key: string; value: unknown };

/** One session in a listing. */
export interface SessionSummary {
  sessionId: string;
  /** The text of the session's first user message, cut to 100 characters. */
  title: string;
  createdAt: Date;
  updatedAt: Date;
  messageCount: number;
}

/** One page of `listSessions`, newest first. */
export interface SessionPage {
  sessions: SessionSummary[];
  /** Pass it back to get the next page; null on the last page. */
  nextCursor: string | null;
}

/** A storage's claim on a session, held while one Session object runs it (see `acquireSession`). */
export interface SessionClaim {
  /** Frees the session for other processes; called once, when the session closes or is abandoned. */
  release(): Promise<void>;
}

/** Where session logs are kept. Every method rejects with AgentError STORAGE_ERROR on failure. */
export interface SessionStorage {
  /** Appends one event to the session's log, creating the session on its first event. */
  saveEvent(sessionId: string, event: SessionEvent): Promise<void>;
  /**
   * Optional: appends several events of one session in one write, all of them or none (one transaction). When
   * present, the runtime hands it the events it has queued together (a model call's usage record with the
   * message saved after it) instead of one `saveEvent` each.
   */
  saveEvents?(sessionId: string, events: readonly SessionEvent[]): Promise<void>;
  /**
   * The whole log in save order, or null for an unknown id. Changing the returned events never changes the
   * stored log: a storage hands out copies, or payloads frozen read-only (InMemorySessionStorage does for some).
   */
  loadSession(sessionId: string): Promise<SessionEvent[] | null>;
  /**
   * Optional: the payloads of the whole log in save order, without their timestamps, or null for an unknown id;
   * changing them never changes the stored log, as with `loadSession`. The runtime reads a log this way to resume,
   * read or fork a session (it replays payloads alone), so a storage can skip making a Date and an event object
   * per saved event; without it, the runtime takes the payloads of `loadSession`'s events.
   */
  loadPayloads?(sessionId: string): Promise<SessionEventPayload[] | null>;
  /** Sessions newest first (by last update); `cursor` comes from the previous page. */
  listSessions(cursor: string | undefined, limit: number): Promise<SessionPage>;
  /** Sessions whose id starts with `query` or whose title or messages contain it. */
  findSession(query: string): Promise<SessionSummary[]>;
  /** Removes a session; an unknown id is not an error. */
  deleteSession(sessionId: string): Promise<void>;
  /**
   * Optional, for storages shared by several processes: claims the session for this process, so that two
   * Agents (on two app servers) never run turns of one session at once. `newSession` and `resumeSession`
   * call it before they touch the log, and reject with its error: AgentError SESSION_BUSY while another
   * process holds the session. The claim is released when the session closes or is abandoned.
   */
  acquireSession?(sessionId: string): Promise<SessionClaim>;
}

/** One long-term memory. */
export interface Memory {
  id: string;
  namespace: string;
  content: string;
  category?: string;
  createdAt: Date;
  updatedAt: Date;
  sourceSessionId?: string;
}

/** Where long-term memories are kept. Every method rejects with AgentError STORAGE_ERROR on failure. */
export interface MemoryStorage {
  /** Memories of the namespace containing any word of `query`, best first; `''` = most recent first. */
  search(namespace: string, query: string, limit: number): Promise<Memory[]>;
  /** Inserts, or replaces the memory with the same id. */
  save(memory: Memory): Promise<void>;
  /** Removes a memory; an unknown id is not an error. */
  delete(id: string): Promise<void>;
}
