/**
 * The approval gate of a tool batch (durable human-in-the-loop): which calls need a person's approval, asking an
 * in-process approver within a window (denied when it passes), and otherwise answering the batch to hold, so
 * that the turn ends *suspended* with its pending calls in the log, to be decided and continued later, by any
 * process that resumes the session. The held batch's log records are in held-batch.ts.
 */

import type {
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  HeldBatch,
  HeldCall,
  TurnRunOptions,
} from '../kernel/approval-types.js';
import type { ResolvedConfig } from '../kernel/config.js';
import { AgentError, describeError } from '../kernel/error.js';
import type { SchemaCheck } from '../kernel/json-schema.js';
import { settleWithin } from '../kernel/settle.js';
import type { ToolCallRequest } from '../kernel/types.js';
import type { ToolHandler } from '../ports/tool.js';
import { approvalWindowPassed } from './held-batch.js';
import { denialText, expiredText, unknownOutcomeText } from './texts.js';

/** What the gate reads of the registered tools: a tool by name, with its compiled schema check. */
export interface ToolLookup {
  find(name: string): { handler: ToolHandler; check: SchemaCheck } | undefined;
}

/** What the gate reads of the agent's config. */
export type GateConfig = Pick<ResolvedConfig, 'maxToolCallsPerTurn' | 'toolTimeoutMs' | 'approvalWindowMs'>;

/**
 * Whether a call needs approval: only a call that would run (valid JSON, a known tool, arguments that fit its
 * schema) whose tool says so. A `needsApproval` function that throws, answers something other than a boolean
 * or does not answer within the tool timeout means the call needs approval: approval never fails open.
 */
export function needsApproval(
  tools: ToolLookup,
  config: GateConfig,
  call: ToolCallRequest,
): boolean | Promise<boolean> {
  if (call.parseError !== undefined) return false;
  const tool = tools.find(call.toolName);
  if (tool === undefined) return false;
  const rule = tool.handler.needsApproval;
  if (rule === undefined || rule === false) return false;
  if (tool.check(call.arguments) !== undefined) return false;
  if (rule === true) return true;
  // Only a rule that is a function has an answer to wait for (and a timer to bound it): a batch of tools
  // without one is decided without a tick.
  return askRule(rule, call, config.toolTimeoutMs);
}

/** A `needsApproval` function's answer, bounded by the tool timeout; anything but `false` means approval. */
async function askRule(
  rule: (args: unknown) => boolean | Promise<boolean>,
  call: ToolCallRequest,
  timeoutMs: number,
): Promise<boolean> {
  try {
    const settled = await settleWithin(Promise.resolve(rule(structuredClone(call.arguments))), timeoutMs);
    return settled.status !== 'fulfilled' || settled.value !== false;
  } catch {
    return true;
  }
}

/**
 * What `gateApprovals` decided: the calls refused (with their result text), and the batch to hold when the
 * turn must suspend (the turn records it in the log and ends suspended; nothing of the batch runs).
 */
interface GateOutcome {
  refused: ReadonlyMap<string, string>;
  hold: HeldBatch | undefined;
}

/** The outcome of a batch none of whose calls needs a decision (most batches): nothing refused, nothing held. */
const NOTHING_TO_DECIDE: GateOutcome = Object.freeze({
  refused: Object.freeze(new Map<string, string>()) as ReadonlyMap<string, string>,
  hold: undefined,
});

/** What `gateApprovals` takes. */
interface GateOptions {
  tools: ToolLookup;
  config: GateConfig;
  sessionId: string;
  turnId: string;
  calls: readonly ToolCallRequest[];
  /** Set when continuing a held batch: its calls' approval needs and decisions are already known. */
  held: HeldBatch | undefined;
  toolCallCount: number;
  run: TurnRunOptions;
  signal: AbortSignal;
}

/**
 * Decides the calls of one batch before it runs. Calls with a recorded decision keep it; undecided ones go to
 * the approver, each within the window. Without an approver the answer is the batch to hold. The gate writes
 * nothing: the turn does, with what it answers. A batch none of whose tools asks for approval (most batches) is
 * answered at once, without a promise.
 */
export function gateApprovals(options: GateOptions): GateOutcome | Promise<GateOutcome> {
  if (options.held === undefined && !mayNeedApproval(options)) return NOTHING_TO_DECIDE;
  return decideBatch(options);
}

/** The batch's decisions, once some call may need one (see `gateApprovals`). */
async function decideBatch(options: GateOptions): Promise<GateOutcome> {
  const { tools, config, sessionId, turnId, calls, held, run, signal } = options;
  const refused = new Map<string, string>();
  const heldCalls: HeldCall[] = [];
  // Calls past the tool-call limit will not run, so they need no decision.
  const runnable = config.maxToolCallsPerTurn - options.toolCallCount;
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index] as ToolCallRequest;
    const heldCall = held?.calls.find((entry) => entry.callId === call.callId);
    let needed = heldCall?.needsApproval ?? false;
    if (held === undefined && index < runnable) {
      const answer = needsApproval(tools, config, call);
      needed = typeof answer === 'boolean' ? answer : await answer;
    }
    heldCalls.push({ ...call, needsApproval: needed, ...(heldCall?.mayHaveRun ? { mayHaveRun: true } : {}) });
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
    return { refused: withUnknownOutcomes(refused, heldCalls), hold: undefined };
  }
  // A turn cancelled meanwhile is not suspended: its batch ends as cancelled calls.
  if (undecided.length === 0 || signal.aborted) {
    return { refused: withUnknownOutcomes(refused, heldCalls), hold: undefined };
  }
  const approve = run.approve;
  if (approve === undefined) {
    const windowMs = run.approvalWindowMs ?? config.approvalWindowMs;
    // A continued batch keeps its first window: asking again does not extend it.
    const expiresAt = held?.expiresAt ?? (windowMs === undefined ? undefined : Date.now() + windowMs);
    const hold: HeldBatch = {
      turnId,
      toolCallCount: options.toolCallCount,
      calls: heldCalls,
      decisions: new Map(),
      expiresAt,
    };
    return { refused, hold };
  }
  const windowMs = run.approvalTimeoutMs ?? config.toolTimeoutMs;
  for (const call of undecided) {
    if (signal.aborted) break;
    const request: ApprovalRequest = {
      callId: call.callId,
      toolName: call.toolName,
      arguments: structuredClone(call.arguments),
      sessionId,
      turnId,
      ...(call.mayHaveRun ? { mayHaveRun: true } : {}),
    };
    const text = await askApprover({ approve, request, windowMs, signal });
    if (text !== undefined) refused.set(call.callId, text);
  }
  return { refused: withUnknownOutcomes(refused, heldCalls), hold: undefined };
}

/**
 * False when no call of a new batch that may run has a tool with an approval rule: then nothing is to decide.
 * It asks no rule (the gate asks each once, below), so a call whose rule may say no counts as maybe.
 */
function mayNeedApproval(options: {
  tools: ToolLookup;
  config: GateConfig;
  calls: readonly ToolCallRequest[];
  toolCallCount: number;
}): boolean {
  const { tools, config, calls } = options;
  const runnable = Math.min(calls.length, config.maxToolCallsPerTurn - options.toolCallCount);
  for (let index = 0; index < runnable; index++) {
    const call = calls[index] as ToolCallRequest;
    if (call.parseError !== undefined) continue;
    const rule = tools.find(call.toolName)?.handler.needsApproval;
    if (rule !== undefined && rule !== false) return true;
  }
  return false;
}

/** A refused call that may have run before an interruption is not "denied" to the model: its outcome is unknown. */
function withUnknownOutcomes(refused: Map<string, string>, calls: readonly HeldCall[]): Map<string, string> {
  for (const call of calls) {
    const text = refused.get(call.callId);
    if (text !== undefined && call.mayHaveRun)
      refused.set(call.callId, unknownOutcomeText(call.toolName, text));
  }
  return refused;
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
