/**
 * A held batch as the session log keeps it: the `approval_pending` record the turn writes when it suspends, the
 * decisions recorded after it, and reading all of that back (a resumed session finds its suspended turn here).
 */

import type { HeldBatch, HeldCall, PendingToolCall } from '../kernel/approval-types.js';
import { MetadataKey } from '../log/metadata-keys.js';
import type { SessionEventPayload } from '../ports/storage.js';

/** The calls of a held batch that need a decision, as events and `pendingApprovals()` show them. */
export function pendingCallsOf(batch: HeldBatch): PendingToolCall[] {
  const expiresAt = batch.expiresAt === undefined ? undefined : new Date(batch.expiresAt).toISOString();
  return batch.calls
    .filter((call) => call.needsApproval)
    .map(({ callId, toolName, arguments: args, mayHaveRun }) => ({
      callId,
      toolName,
      arguments: args,
      ...(expiresAt === undefined ? {} : { expiresAt }),
      ...(mayHaveRun === true ? { mayHaveRun } : {}),
    }));
}

/** Whether the batch's approval window has passed: its undecided calls count as denied. */
export function approvalWindowPassed(batch: HeldBatch, now = Date.now()): boolean {
  return batch.expiresAt !== undefined && now >= batch.expiresAt;
}

/** The log record of a batch held for approval (written, by the turn, after the batch's tool_call messages). */
export function heldBatchRecord(batch: HeldBatch): SessionEventPayload {
  const { turnId, toolCallCount, calls, expiresAt } = batch;
  const value = {
    turnId,
    toolCallCount,
    calls,
    ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
  };
  return { type: 'metadata', key: MetadataKey.approvalPending, value };
}

/** The log record of a decision on one held call. */
export function decisionRecord(
  callId: string,
  approved: boolean,
  reason: string | undefined,
): SessionEventPayload {
  const value = reason === undefined ? { callId, approved } : { callId, approved, reason };
  return { type: 'metadata', key: MetadataKey.approvalDecision, value };
}

/** The log record that the held batch was continued. */
export function continuedRecord(turnId: string): SessionEventPayload {
  return { type: 'metadata', key: MetadataKey.approvalContinued, value: { turnId } };
}

/**
 * The batch a session's log leaves held, or undefined: the last `approval_pending` not yet followed by
 * `approval_continued` (or by a result or message of another kind, which a held batch never is), with the
 * decisions recorded since.
 */
export function readHeldBatch(payloads: readonly SessionEventPayload[]): HeldBatch | undefined {
  // From the end back to the last `approval_pending`: anything that ends a batch on the way means none is held.
  // Most logs end with a message that ends any batch, so a resume reads one event here, not the whole log.
  let start = payloads.length - 1;
  for (; start >= 0; start--) {
    const payload = payloads[start] as SessionEventPayload;
    const { type } = payload;
    if (type === 'tool_call') continue;
    if (type !== 'metadata') return undefined;
    const { key } = payload;
    if (key === MetadataKey.approvalPending) break;
    if (key === MetadataKey.approvalContinued || key === MetadataKey.compaction) return undefined;
  }
  if (start < 0) return undefined;
  const pending = payloads[start] as SessionEventPayload;
  const batch = pending.type === 'metadata' ? readPending(pending.value) : undefined;
  if (batch === undefined) return undefined;
  for (let index = start + 1; index < payloads.length; index++) {
    const payload = payloads[index] as SessionEventPayload;
    if (payload.type !== 'metadata' || payload.key !== MetadataKey.approvalDecision) continue;
    const decision = readRecordedDecision(payload.value);
    if (decision !== undefined && batch.calls.some((call) => call.callId === decision.callId)) {
      batch.decisions.set(decision.callId, { approved: decision.approved, reason: decision.reason });
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
    if (call.mayHaveRun === true) held.mayHaveRun = true;
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
