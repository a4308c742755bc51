import type { PendingToolCall } from './approval-types.js';
import type { AgentError } from './error.js';
import type { ToolOutput } from './ports/tool.js';

/** One event of a running turn, as the caller reads it from `RunningTurn`. */
export interface AgentEvent {
  sessionId: string;
  turnId: string;
  timestamp: Date;
  /** Strictly increasing over the life of one Session object, across its turns. */
  sequence: number;
  payload: AgentEventPayload;
}

/**
 * What happened. Every turn ends with exactly one `turn_complete`, `turn_cancelled` or `turn_suspended`, and
 * nothing comes after it; a failed turn emits `error` and then `turn_complete`. A suspended turn waits for
 * decisions on `pendingCalls` (`Session.approve`/`deny`, then `Session.continue`).
 */
export type AgentEventPayload =
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  | { type: 'tool_call_start'; callId: string; toolName: string; arguments: unknown }
  | {
      type: 'tool_call_end';
      callId: string;
      toolName: string;
      output: ToolOutput;
      durationMs: number;
      success: boolean;
    }
  | { type: 'context_compacted' }
  | { type: 'turn_complete' }
  | { type: 'turn_cancelled' }
  | { type: 'turn_suspended'; pendingCalls: PendingToolCall[] }
  | { type: 'error'; error: AgentError };

/** The `type` of an event payload. */
export type AgentEventType = AgentEventPayload['type'];
