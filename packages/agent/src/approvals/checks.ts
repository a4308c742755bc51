/**
 * The checks of what a caller hands the approval API (`approve`, `deny`, `continue`, run options) and of a
 * session that holds a suspended turn, each failing with an AgentError that says what to do instead.
 */

import type { HeldBatch, TurnRunOptions } from '../kernel/approval-types.js';
import { MAX_APPROVAL_WINDOW_MS } from '../kernel/config.js';
import { AgentError } from '../kernel/error.js';
import { approvalWindowPassed, pendingCallsOf } from './held-batch.js';

/** What these checks read of a session: its id, and the batch it holds for approval, if any. */
interface SuspendableSession {
  readonly id: string;
  readonly heldBatch?: HeldBatch | undefined;
}

/**
 * Checks a decision on a held call (`approve(callId)` / `deny(callId, reason)`) and answers it with the batch
 * it belongs to; the caller records it. Throws INVALID_INPUT for a call id that does not wait for a decision
 * (unknown, or a call of the batch that needs none) or a window that passed.
 */
export function checkDecision(options: {
  session: SuspendableSession;
  callId: unknown;
  approved: boolean;
  reason: unknown;
}): { batch: HeldBatch; callId: string; reason: string | undefined } {
  const { session, callId, approved, reason } = options;
  const verb = approved ? 'approve' : 'deny';
  if (typeof callId !== 'string' || callId === '') {
    throw new AgentError({ code: 'INVALID_INPUT', message: `${verb}(callId) takes a non-empty call id` });
  }
  if (reason !== undefined && typeof reason !== 'string') {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: 'deny(callId, reason) takes a string reason or none',
    });
  }
  const batch = session.heldBatch;
  const call = batch?.calls.find((entry) => entry.callId === callId && entry.needsApproval);
  if (batch === undefined || call === undefined) {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `tool call '${callId}' does not wait for approval in session '${session.id}'; see pendingApprovals()`,
    });
  }
  if (approvalWindowPassed(batch)) {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `the approval window of tool call '${callId}' passed at ${new Date(batch.expiresAt ?? 0).toISOString()}: it counts as denied; continue() goes on without it`,
    });
  }
  return { batch, callId, reason };
}

/** Throws INVALID_INPUT unless the held batch can be continued with these options. */
export function checkContinuable(session: SuspendableSession, run: TurnRunOptions): HeldBatch {
  const batch = session.heldBatch;
  if (batch === undefined) {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `session '${session.id}' has no tool calls waiting for approval; send a message instead`,
    });
  }
  const undecided = pendingCallsOf(batch).filter((call) => !batch.decisions.has(call.callId));
  if (undecided.length > 0 && run.approve === undefined && !approvalWindowPassed(batch)) {
    const ids = undecided.map((call) => call.callId).join(', ');
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `approve or deny every pending tool call before continue(), or pass an approver; undecided: ${ids}`,
    });
  }
  return batch;
}

/** Throws INVALID_INPUT when `options` is not a TurnRunOptions. */
export function checkRunOptions(options: unknown): TurnRunOptions {
  if (options === undefined) return {};
  const fail = (message: string): never => {
    throw new AgentError({ code: 'INVALID_INPUT', message });
  };
  if (typeof options !== 'object' || options === null) return fail('turn options must be an object');
  const record = options as { approve?: unknown; approvalTimeoutMs?: unknown; approvalWindowMs?: unknown };
  if (record.approve !== undefined && typeof record.approve !== 'function') {
    fail('options.approve must be a function (request, signal) => ApprovalDecision');
  }
  const ms = record.approvalTimeoutMs;
  if (ms !== undefined && (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0)) {
    fail('options.approvalTimeoutMs must be a positive number of milliseconds');
  }
  const window = record.approvalWindowMs;
  if (
    window !== undefined &&
    (typeof window !== 'number' || !Number.isInteger(window) || window < 1 || window > MAX_APPROVAL_WINDOW_MS)
  ) {
    fail(`options.approvalWindowMs must be an integer from 1 to ${MAX_APPROVAL_WINDOW_MS} milliseconds`);
  }
  return options as TurnRunOptions;
}

/** Throws TURN_BUSY while the session has a suspended turn: `what` must wait until it is continued. */
export function checkNotSuspended(session: SuspendableSession, what: string): void {
  if (session.heldBatch === undefined) return;
  throw new AgentError({
    code: 'TURN_BUSY',
    message: `session '${session.id}' has a suspended turn: approve or deny its pending tool calls (pendingApprovals()), then continue() it before ${what}`,
  });
}
