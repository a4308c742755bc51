import type { ContentBlock, MessageStatus } from '../types.js';

/** One persisted event of a session's log. */
export interface SessionEvent {
  timestamp: Date;
  payload: SessionEventPayload;
}

/** What the log holds: the messages as they entered the context, plus metadata. */
export type SessionEventPayload =
  | { type: 'user_message'; content: ContentBlock[] }
  | { type: 'assistant_message'; content: ContentBlock[]; status: MessageStatus }
  | { type: 'tool_call'; callId: string; toolName: string; arguments: unknown }
  | { type: 'tool_result'; callId: string; content: string; isError: boolean }
  | { type: 'system_message'; content: string }
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

/** Where session logs are kept. Every method rejects with AgentError STORAGE_ERROR on failure. */
export interface SessionStorage {
  /** Appends one event to the session's log, creating the session on its first event. */
  saveEvent(sessionId: string, event: SessionEvent): Promise<void>;
  /** The whole log in save order, or null for an unknown id. */
  loadSession(sessionId: string): Promise<SessionEvent[] | null>;
  /** Sessions newest first (by last update); `cursor` comes from the previous page. */
  listSessions(cursor: string | undefined, limit: number): Promise<SessionPage>;
  /** Sessions whose id starts with `query` or whose title or messages contain it. */
  findSession(query: string): Promise<SessionSummary[]>;
  /** Removes a session; an unknown id is not an error. */
  deleteSession(sessionId: string): Promise<void>;
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
