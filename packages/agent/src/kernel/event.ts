import type { PendingToolCall } from './approval-types.js';
import type { AgentError } from './error.js';
import type { ChatPurpose, ContentBlock, TokenUsage, ToolOutput, UsageTotals } from './types.js';

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
  /**
   * Output a running tool reported (`ToolInput.onOutput`), as it came, between the call's `tool_call_start`
   * and `tool_call_end`; not saved. Per call at most 1 MiB of text in at most 4096 deltas is emitted (then one
   * notice delta); the `tool_call_end` still carries the tool's whole (capped) result.
   */
  | { type: 'tool_output_delta'; callId: string; text: string }
  | {
      type: 'tool_call_end';
      callId: string;
      toolName: string;
      output: ToolOutput;
      durationMs: number;
      success: boolean;
      /** Present (true) when the call did not run because its approval was denied or its approval window passed. */
      denied?: true;
    }
  | { type: 'context_compacted' }
  /**
   * One model call's usage as its provider reported it (the turn's own calls, compaction and memory calls,
   * told apart by `purpose`); `costUsd` when the model's pricing is known. A provider that reports no usage
   * for a call gives no event.
   */
  | {
      type: 'usage';
      purpose: ChatPurpose;
      providerId: string;
      modelId: string;
      usage: TokenUsage;
      costUsd?: number;
    }
  /**
   * A model call failed with a retryable error (429, 529/overloaded, 5xx, a timeout, a refused or dropped
   * connection) after its provider's own retries, before any of its answer came: it is sent again to `to`, the
   * next of the fallback models. `reason` is that failure (a PROVIDER_ERROR: its message may hold the
   * provider's text, so a host shows it as it shows a provider's `error`).
   */
  | { type: 'model_fallback'; from: string; to: string; reason: AgentError }
  /** A message given to `Session.steer` entered the context (and was saved), before the next model call. */
  | { type: 'steered'; content: ContentBlock[] }
  /** A message given to `Session.followUp` was queued: it starts the next turn when this one ends. */
  | { type: 'follow_up_queued'; content: ContentBlock[] }
  /**
   * A structured-output answer was not valid against the schema (`errors` says why): the model is asked once
   * more, and the text deltas that follow are a new answer, not a continuation of the last one.
   */
  | { type: 'output_repair'; errors: string[] }
  /**
   * `usage` is the sum of the turn's `usage` events and its sub-agents' usage; `output`: the parsed structured
   * answer, when the turn asked for one and completed with a valid answer.
   */
  | { type: 'turn_complete'; usage: UsageTotals; output?: unknown }
  /**
   * The turn continues one a crash cut (`Session.continue()`): `calls` are the calls it left without a result,
   * each run again unless `mayHaveRun` (then it waits for a decision); `askedAgain` when the model is asked again.
   */
  | {
      type: 'turn_continued';
      calls: { callId: string; toolName: string; mayHaveRun: boolean }[];
      askedAgain: boolean;
    }
  | { type: 'turn_cancelled' }
  | { type: 'turn_suspended'; pendingCalls: PendingToolCall[] }
  | { type: 'error'; error: AgentError }
  /**
   * One event of a sub-agent's turn, between the `tool_call_start` and `tool_call_end` of the call (`callId`)
   * that runs it; `sessionId` and `turnId` are the child's. The wrapper of the child's terminal event carries
   * what the child's model calls used, its own sub-agents' included.
   */
  | {
      type: 'subagent';
      callId: string;
      sessionId: string;
      turnId: string;
      event: AgentEventPayload;
      usage?: UsageTotals;
    };

/** The `type` of an event payload. */
export type AgentEventType = AgentEventPayload['type'];
