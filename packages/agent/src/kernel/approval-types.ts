/** The types of durable approvals (see approvals/); value types, so events and the session state can name them. */

/** A tool call that waits for a decision. */
export interface PendingToolCall {
  callId: string;
  toolName: string;
  arguments: unknown;
  /** When the approval window passes (ISO 8601); then the call is denied unless decided. Absent: no window. */
  expiresAt?: string;
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
}

/** One call of a held batch; `needsApproval` is decided once, when the model made the call. */
export interface HeldCall {
  callId: string;
  toolName: string;
  /** The parsed arguments, or the raw text when they did not parse. */
  arguments: unknown;
  parseError?: string;
  needsApproval: boolean;
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
