/**
 * Durable human-in-the-loop: which tool calls need a person's approval, asking an in-process approver within
 * a window (denied when it passes), and otherwise holding the batch so the turn ends *suspended* with its
 * pending calls in the log, to be decided and continued later, by any process that resumes the session.
 */

import type {
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  HeldBatch,
  HeldCall,
  PendingToolCall,
  TurnRunOptions,
} from '../kernel/approval-types.js';
import { MAX_APPROVAL_WINDOW_MS } from '../kernel/config.js';
import { AgentError, describeError } from '../kernel/error.js';
import { settleWithin } from '../kernel/settle.js';
import type { SessionEvent } from '../ports/storage.js';
import type { ToolCallRequest } from '../tools/tool-dispatch.js';
import type { AgentRuntime, SessionState } from '../turn/session-state.js';

export type {
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  HeldBatch,
  HeldCall,
  PendingToolCall,
  RecordedDecision,
  TurnRunOptions,
} from '../kernel/approval-types.js';

/** The log's metadata keys of approvals. */
export const APPROVAL_PENDING = 'approval_pending';
export const APPROVAL_DECISION = 'approval_decision';
export const APPROVAL_CONTINUED = 'approval_continued';

/** The calls of a held batch that need a decision, as events and `pendingApprovals()` show them. */
export function pendingCallsOf(batch: HeldBatch): PendingToolCall[] {
  const expiresAt = batch.expiresAt === undefined ? undefined : new Date(batch.expiresAt).toISOString();
  return batch.calls
    .filter((call) => call.needsApproval)
    .map(({ callId, toolName, arguments: args }) =>
      expiresAt === undefined
        ? { callId, toolName, arguments: args }
        : { callId, toolName, arguments: args, expiresAt },
    );
}

/** Whether the batch's approval window has passed: its undecided calls count as denied. */
export function approvalWindowPassed(batch: HeldBatch, now = Date.now()): boolean {
  return batch.expiresAt !== undefined && now >= batch.expiresAt;
}

/** The result text of a call nobody decided on within the approval window. */
function expiredText(toolName: string): string {
  return denialText(toolName, 'nobody decided on it within the approval window');
}

/** The result text a denied call gets. */
export function denialText(toolName: string, reason: string | undefined): string {
  return reason === undefined || reason === ''
    ? `Tool '${toolName}' was denied: the user did not approve it`
    : `Tool '${toolName}' was denied: ${reason}`;
}

/**
 * Whether a call needs approval: only a call that would run (valid JSON, a known tool, arguments that fit its
 * schema) whose tool says so. A `needsApproval` function that throws, answers something other than a boolean
 * or does not answer within the tool timeout means the call needs approval: approval never fails open.
 */
export async function needsApproval(runtime: AgentRuntime, call: ToolCallRequest): Promise<boolean> {
  if (call.parseError !== undefined) return false;
  const tool = runtime.tools.find(call.toolName);
  if (tool === undefined) return false;
  const rule = tool.handler.needsApproval;
  if (rule === undefined || rule === false) return false;
  if (tool.check(call.arguments) !== undefined) return false;
  if (rule === true) return true;
  try {
    const settled = await settleWithin(
      Promise.resolve(rule(structuredClone(call.arguments))),
      runtime.config.toolTimeoutMs,
    );
    return settled.status !== 'fulfilled' || settled.value !== false;
  } catch {
    return true;
  }
}

/** What `gateApprovals` decided: calls refused (with their result text), or the turn suspends. */
export interface GateOutcome {
  refused: Map<string, string>;
  suspended: PendingToolCall[] | undefined;
}

/**
 * Decides the calls of one batch before it runs. Calls with a recorded decision keep it; undecided ones go to
 * the approver, each within the window. Without an approver the batch is held: it is saved as metadata in
 * the log (after its tool_call messages) and the turn suspends; nothing of it runs.
 */
export async function gateApprovals(options: {
  runtime: AgentRuntime;
  session: SessionState;
  turnId: string;
  calls: readonly ToolCallRequest[];
  /** Set when continuing a held batch: its calls' approval needs and decisions are already known. */
  held: HeldBatch | undefined;
  toolCallCount: number;
  run: TurnRunOptions;
  signal: AbortSignal;
}): Promise<GateOutcome> {
  const { runtime, session, turnId, calls, held, run, signal } = options;
  const refused = new Map<string, string>();
  const heldCalls: HeldCall[] = [];
  // Calls past the tool-call limit will not run, so they need no decision.
  const runnable = runtime.config.maxToolCallsPerTurn - options.toolCallCount;
  for (const [index, call] of calls.entries()) {
    const needed =
      held === undefined
        ? index < runnable && (await needsApproval(runtime, call))
        : (held.calls.find((entry) => entry.callId === call.callId)?.needsApproval ?? false);
    heldCalls.push({ ...call, needsApproval: needed });
  }
  const undecided = heldCalls.filter((call) => call.needsApproval && !held?.decisions.has(call.callId));
  for (const call of heldCalls) {
    const decision = held?.decisions.get(call.callId);
    if (decision !== undefined && !decision.approved) {
      refused.set(call.callId, denialText(call.toolName, decision.reason));
    }
  }
  // Past the window, silence is a denial: the held batch goes on without the undecided calls.
  if (held !== undefined && approvalWindowPassed(held)) {
    for (const call of undecided) refused.set(call.callId, expiredText(call.toolName));
    return { refused, suspended: undefined };
  }
  // A turn cancelled meanwhile is not suspended: its batch ends as cancelled calls.
  if (undecided.length === 0 || signal.aborted) return { refused, suspended: undefined };
  const approve = run.approve;
  if (approve === undefined) {
    const windowMs = run.approvalWindowMs ?? runtime.config.approvalWindowMs;
    // A continued batch keeps its first window: asking again does not extend it.
    const expiresAt = held?.expiresAt ?? (windowMs === undefined ? undefined : Date.now() + windowMs);
    const batch: HeldBatch = {
      turnId,
      toolCallCount: options.toolCallCount,
      calls: heldCalls,
      decisions: new Map(),
      expiresAt,
    };
    const value = {
      turnId,
      toolCallCount: options.toolCallCount,
      calls: heldCalls,
      ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
    };
    await session.log.append({ type: 'metadata', key: APPROVAL_PENDING, value });
    session.heldBatch = batch;
    return { refused, suspended: pendingCallsOf(batch) };
  }
  const windowMs = run.approvalTimeoutMs ?? runtime.config.toolTimeoutMs;
  for (const call of undecided) {
    if (signal.aborted) break;
    const request: ApprovalRequest = {
      callId: call.callId,
      toolName: call.toolName,
      arguments: structuredClone(call.arguments),
      sessionId: session.id,
      turnId,
    };
    const text = await askApprover({ approve, request, windowMs, signal });
    if (text !== undefined) refused.set(call.callId, text);
  }
  return { refused, suspended: undefined };
}

/** Asks the approver about one call; undefined when approved, else the denial's result text. */
async function askApprover(options: {
  approve: Approver;
  request: ApprovalRequest;
  windowMs: number;
  signal: AbortSignal;
}): Promise<string | undefined> {
  const { approve, request, windowMs, signal } = options;
  const controller = new AbortController();
  // The turn's cancel ends the wait at once, whatever the approver does with its signal.
  let onAbort = (): void => {};
  const cancelled = new Promise<'cancelled'>((resolve) => {
    onAbort = () => {
      controller.abort(signal.reason);
      resolve('cancelled');
    };
  });
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const answer = approve(request, controller.signal);
    const settled = await settleWithin(Promise.race([Promise.resolve(answer), cancelled]), windowMs);
    if (settled.status === 'timeout') {
      controller.abort(new AgentError({ code: 'TOOL_TIMEOUT', message: 'the approval window passed' }));
      return denialText(request.toolName, `nobody approved it within ${windowMs}ms`);
    }
    if (settled.status === 'rejected') {
      return denialText(request.toolName, `the approval failed (${describeError(settled.error)})`);
    }
    if (settled.value === 'cancelled') return denialText(request.toolName, 'the turn was cancelled');
    const decision = readDecision(settled.value);
    if (decision === undefined) return denialText(request.toolName, 'the approver gave no valid answer');
    return decision.type === 'approve' ? undefined : denialText(request.toolName, decision.reason);
  } catch (error) {
    return denialText(request.toolName, `the approval failed (${describeError(error)})`);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** An approver's answer, checked; undefined when it is not an ApprovalDecision. */
function readDecision(value: unknown): ApprovalDecision | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as { type?: unknown; reason?: unknown };
  if (record.type === 'approve') return { type: 'approve' };
  if (record.type !== 'deny') return undefined;
  return typeof record.reason === 'string' ? { type: 'deny', reason: record.reason } : { type: 'deny' };
}

/**
 * The batch a session's log leaves held, or undefined: the last `approval_pending` not yet followed by
 * `approval_continued` (or by a result or message of another kind, which a held batch never is), with the
 * decisions recorded since.
 */
export function readHeldBatch(events: readonly SessionEvent[]): HeldBatch | undefined {
  let batch: HeldBatch | undefined;
  for (const { payload } of events) {
    if (payload.type === 'metadata') {
      if (payload.key === APPROVAL_PENDING) batch = readPending(payload.value);
      else if (payload.key === APPROVAL_CONTINUED) batch = undefined;
      else if (payload.key === APPROVAL_DECISION && batch !== undefined) {
        const decision = readRecordedDecision(payload.value);
        if (decision !== undefined && batch.calls.some((call) => call.callId === decision.callId)) {
          batch.decisions.set(decision.callId, { approved: decision.approved, reason: decision.reason });
        }
      } else if (payload.key === 'compaction') batch = undefined;
    } else if (payload.type !== 'tool_call') {
      batch = undefined;
    }
  }
  return batch;
}

function readPending(value: unknown): HeldBatch | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as { turnId?: unknown; toolCallCount?: unknown; calls?: unknown; expiresAt?: unknown };
  if (typeof record.turnId !== 'string' || !Array.isArray(record.calls)) return undefined;
  const calls: HeldCall[] = [];
  for (const entry of record.calls as unknown[]) {
    if (typeof entry !== 'object' || entry === null) return undefined;
    const call = entry as Record<string, unknown>;
    if (typeof call.callId !== 'string' || typeof call.toolName !== 'string') return undefined;
    const held: HeldCall = {
      callId: call.callId,
      toolName: call.toolName,
      arguments: call.arguments,
      needsApproval: call.needsApproval === true,
    };
    if (typeof call.parseError === 'string') held.parseError = call.parseError;
    calls.push(held);
  }
  const count = record.toolCallCount;
  const expiresAt = typeof record.expiresAt === 'string' ? Date.parse(record.expiresAt) : Number.NaN;
  return {
    turnId: record.turnId,
    toolCallCount: typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : 0,
    calls,
    decisions: new Map(),
    expiresAt: Number.isFinite(expiresAt) ? expiresAt : undefined,
  };
}

function readRecordedDecision(
  value: unknown,
): { callId: string; approved: boolean; reason: string | undefined } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as { callId?: unknown; approved?: unknown; reason?: unknown };
  if (typeof record.callId !== 'string' || typeof record.approved !== 'boolean') return undefined;
  const reason = typeof record.reason === 'string' ? record.reason : undefined;
  return { callId: record.callId, approved: record.approved, reason };
}

/**
 * Records a decision on a held call in the log, then in the batch. Throws INVALID_INPUT for a call id that
 * does not wait for a decision (unknown, or a call of the batch that needs none).
 */
export async function recordDecision(options: {
  session: SessionState;
  callId: unknown;
  approved: boolean;
  reason: unknown;
}): Promise<void> {
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
  const value = reason === undefined ? { callId, approved } : { callId, approved, reason };
  await session.log.append({ type: 'metadata', key: APPROVAL_DECISION, value });
  batch.decisions.set(callId, { approved, reason });
}

/** Throws INVALID_INPUT unless the held batch can be continued with these options. */
export function checkContinuable(session: SessionState, run: TurnRunOptions): HeldBatch {
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
export function checkNotSuspended(session: SessionState, what: string): void {
  if (session.heldBatch === undefined) return;
  throw new AgentError({
    code: 'TURN_BUSY',
    message: `session '${session.id}' has a suspended turn: approve or deny its pending tool calls (pendingApprovals()), then continue() it before ${what}`,
  });
}
