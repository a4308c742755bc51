/**
 * A turn cut by a crash, as the log leaves it, and how it is reconciled when it is continued: the calls it saved
 * without a result go into a held batch, where a read-only (or idempotent) call simply runs again and a mutating
 * one, which may have run before the interruption, waits for a person's decision (docs/decisions.md).
 */

import type { HeldBatch, HeldCall, InterruptedTurn } from '../kernel/approval-types.js';
import { OpenCalls } from '../kernel/open-calls.js';
import type { ToolCallRequest } from '../kernel/types.js';
import { MetadataKey } from '../log/metadata-keys.js';
import type { SessionEventPayload } from '../ports/storage.js';
import { type GateConfig, needsApproval, type ToolLookup } from './gate.js';

/** What the log says of a turn that was cut before it ended. */
export interface InterruptedTurnRecord {
  /** The calls saved without a result, in call order. */
  calls: ToolCallRequest[];
  /** True when the log ends with an answer saved incomplete: it is asked again, and leaves the context. */
  partialAnswer: boolean;
  /** The calls the turn ran before it was cut (for the tool-call limit). */
  toolCallCount: number;
}

/**
 * The turn the log leaves cut, or undefined. Every turn ends with its final answer as the last message, with a
 * held batch (`approval_pending`), or with a `turn_ended` record; a log whose last message is anything else, with
 * nothing of these after it, was cut: by a crash during a model call, a tool batch, an approval or a compaction.
 * (A log written before `turn_ended` existed shows a failed turn as cut too: continuing it asks the model again.)
 */
export function readInterruptedTurn(
  payloads: readonly SessionEventPayload[],
): InterruptedTurnRecord | undefined {
  if (endsSettled(payloads)) return undefined;
  let last: SessionEventPayload | undefined;
  let ended = false;
  // The payloads, not requests made of them: most calls of a long log get their result, and a request is only
  // needed for those that did not.
  const open = new OpenCalls<ToolCallPayload>();
  let callsSinceUser = 0;
  // A cut answer leaves the context when its turn is continued; a second cut before any message keeps it out.
  let answerDropped = false;
  // Indexed rather than `for of`: this runs once per resume, mostly before it is optimised, and an array
  // iterator then allocates a result object per event.
  for (let index = 0; index < payloads.length; index++) {
    const payload = payloads[index] as SessionEventPayload;
    if (payload.type === 'metadata') {
      if (payload.key === MetadataKey.turnEnded || payload.key === MetadataKey.approvalPending) ended = true;
      else if (payload.key === MetadataKey.approvalContinued) ended = false;
      else if (payload.key === MetadataKey.turnContinued) answerDropped = true;
      // A replay gives calls still open at a compaction the interrupted result: they are settled.
      else if (payload.key === MetadataKey.compaction) open.clear();
      continue;
    }
    last = payload;
    ended = false;
    answerDropped = false;
    if (payload.type === 'tool_call') {
      open.set(payload.callId, payload);
      callsSinceUser += 1;
    } else if (payload.type === 'tool_result') {
      open.delete(payload.callId);
    } else {
      open.clear();
      if (payload.type === 'user_message') callsSinceUser = 0;
    }
  }
  if (last === undefined || ended) return undefined;
  if (last.type === 'assistant_message' && last.status === 'complete') return undefined;
  return {
    calls: open.values().map(({ callId, toolName, arguments: args }) => ({
      callId,
      toolName,
      arguments: args,
    })),
    partialAnswer: last.type === 'assistant_message' && !answerDropped,
    toolCallCount: callsSinceUser - open.size,
  };
}

/**
 * True when the log's end shows no cut turn, read from the end back to its last message: no message at all, a
 * `turn_ended` or `approval_pending` as the last of the records that settle a turn, or a complete final answer.
 * Most logs end so, and a resume then reads a few events here rather than the whole log.
 */
function endsSettled(payloads: readonly SessionEventPayload[]): boolean {
  let decided = false;
  for (let index = payloads.length - 1; index >= 0; index--) {
    const payload = payloads[index] as SessionEventPayload;
    if (payload.type !== 'metadata')
      return payload.type === 'assistant_message' && payload.status === 'complete';
    if (decided) continue;
    const { key } = payload;
    if (key === MetadataKey.turnEnded || key === MetadataKey.approvalPending) return true;
    // The last of these records after the last message decides, as reading front to back would.
    if (key === MetadataKey.approvalContinued) decided = true;
  }
  return true;
}

/** A saved tool call. */
type ToolCallPayload = Extract<SessionEventPayload, { type: 'tool_call' }>;

/**
 * The held batch of an interrupted turn's unfinished calls. A mutating call whose tool is not idempotent may have
 * run: it needs approval and is marked so. Any other call runs again, asking for approval only as its tool would.
 */
export async function reconcileCalls(options: {
  tools: ToolLookup;
  config: GateConfig;
  turnId: string;
  interrupted: InterruptedTurnRecord;
}): Promise<HeldBatch> {
  const { tools, config, turnId, interrupted } = options;
  const calls: HeldCall[] = [];
  for (const call of interrupted.calls) {
    if (mayHaveRun(tools, call)) {
      calls.push({ ...call, needsApproval: true, mayHaveRun: true });
    } else {
      calls.push({ ...call, needsApproval: await needsApproval(tools, config, call) });
    }
  }
  return {
    turnId,
    toolCallCount: interrupted.toolCallCount,
    calls,
    decisions: new Map(),
    expiresAt: undefined,
  };
}

/**
 * Whether a call without a result may have changed something before the interruption: a valid call of a mutating
 * tool that does not declare itself idempotent. Such a call is never run again without a person's decision.
 */
function mayHaveRun(tools: ToolLookup, call: ToolCallRequest): boolean {
  const tool = tools.find(call.toolName);
  if (tool === undefined || !tool.handler.isMutating || tool.handler.idempotent === true) return false;
  return tool.check(call.arguments) === undefined;
}

/** The interrupted turn as `Session.interruptedTurn()` shows it. */
export function interruptedTurnView(tools: ToolLookup, interrupted: InterruptedTurnRecord): InterruptedTurn {
  return {
    unfinishedCalls: interrupted.calls.map((call) => ({
      callId: call.callId,
      toolName: call.toolName,
      arguments: structuredClone(call.arguments),
      mayHaveRun: mayHaveRun(tools, call),
    })),
    partialAnswer: interrupted.partialAnswer,
  };
}

/** The log record of a turn that ended with something other than its final answer as the last message. */
export function turnEndedRecord(turnId: string, status: string): SessionEventPayload {
  return { type: 'metadata', key: MetadataKey.turnEnded, value: { turnId, status } };
}

/** The log record that an interrupted turn was continued (a replay drops its cut answer here). */
export function turnContinuedRecord(turnId: string): SessionEventPayload {
  return { type: 'metadata', key: MetadataKey.turnContinued, value: { turnId } };
}
