import type { Budget } from './types.js';

/** The types of durable approvals (see approvals/); value types, so events and the session state can name them. */

/** A tool call that waits for a decision. */
export interface PendingToolCall {
  callId: string;
  toolName: string;
  arguments: unknown;
  /** When the approval window passes (ISO 8601); then the call is denied unless decided. Absent: no window. */
  expiresAt?: string;
  /**
   * Set on a mutating call of an interrupted turn that had no result: it may have run before the interruption.
   * Approving it runs it again; denying it tells the model its outcome is unknown.
   */
  mayHaveRun?: true;
}

/** A decision on a call that needs approval; a denial's `reason` is shown to the model. */
export type ApprovalDecision = { type: 'approve' } | { type: 'deny'; reason?: string };

/** What an approver is asked about: the call, and the session and turn it belongs to. */
export interface ApprovalRequest extends Omit<PendingToolCall, 'expiresAt'> {
  sessionId: string;
  turnId: string;
}

/**
 * Answers approval requests in-process, one call at a time in call order. The signal fires when the window
 * passes or the turn is cancelled; a throw, a malformed answer or no answer in the window is a denial.
 */
export type Approver = (
  request: ApprovalRequest,
  signal: AbortSignal,
) => ApprovalDecision | Promise<ApprovalDecision>;

/** Options of `Session.sendMessage` and `Session.continue`. */
export interface TurnRunOptions {
  /** Decides calls whose tool needs approval; without one, such a call suspends the turn. */
  approve?: Approver;
  /** How long the approver has for each call (default: the agent's `toolTimeoutMs`); then it is denied. */
  approvalTimeoutMs?: number;
  /** Without an approver: how long a suspended turn's calls wait for a decision (default: the agent's `approvalWindowMs`). */
  approvalWindowMs?: number;
  /**
   * This turn's budget (from here to its end, a continued turn's rest included), instead of the session's or
   * the agent's turn budget; the session's budget applies as well.
   */
  budget?: Budget;
}

/** One call of a held batch; `needsApproval` is decided once, when the model made the call. */
export interface HeldCall {
  callId: string;
  toolName: string;
  /** The parsed arguments, or the raw text when they did not parse. */
  arguments: unknown;
  parseError?: string;
  needsApproval: boolean;
  /** A call of an interrupted turn that may have run before the interruption (see PendingToolCall). */
  mayHaveRun?: true;
}

/** A decision recorded for a held call. */
interface RecordedDecision {
  approved: boolean;
  reason: string | undefined;
}

/** The tool batch a suspended turn holds: none of its calls ran; those that need approval wait for decisions. */
export interface HeldBatch {
  turnId: string;
  /** Tool calls the turn ran before it was suspended (for the tool-call limit). */
  toolCallCount: number;
  calls: HeldCall[];
  decisions: Map<string, RecordedDecision>;
  /** When the approval window passes (ms since the epoch); undefined: no window. */
  expiresAt: number | undefined;
}

/** A turn a crash cut, as `Session.interruptedTurn()` shows it; `Session.continue()` runs the rest of it. */
export interface InterruptedTurn {
  /**
   * The calls it saved without a result, in call order: each runs again when the turn is continued, but one that
   * `mayHaveRun` (a mutating tool that is not idempotent), which waits for approval instead.
   */
  unfinishedCalls: { callId: string; toolName: string; arguments: unknown; mayHaveRun: boolean }[];
  /** True when the log ends with a model answer the crash cut: it stays in the log, and the model is asked again. */
  partialAnswer: boolean;
}
