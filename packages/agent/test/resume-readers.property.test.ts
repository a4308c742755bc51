import fc from 'fast-check';
import { expect, test } from 'vitest';
import { decisionRecord, heldBatchRecord, readHeldBatch } from '../src/approvals/held-batch.js';
import { readInterruptedTurn } from '../src/approvals/interrupted-turn.js';
import type { HeldBatch } from '../src/kernel/approval-types.js';
import { MetadataKey } from '../src/log/metadata-keys.js';
import type { SessionEventPayload } from '../src/ports/storage.js';

/** What the log says a held batch is, read front to back: the rule readHeldBatch must keep. */
function heldBatchFrontToBack(payloads: readonly SessionEventPayload[]): unknown {
  let batch: { turnId: string; calls: string[]; decisions: [string, boolean][] } | undefined;
  for (const payload of payloads) {
    if (payload.type === 'tool_call') continue;
    if (payload.type !== 'metadata') {
      batch = undefined;
      continue;
    }
    const value = payload.value as {
      turnId?: unknown;
      calls?: { callId: string }[];
      callId?: string;
      approved?: boolean;
    };
    if (payload.key === MetadataKey.approvalPending) {
      batch =
        typeof value.turnId === 'string' && Array.isArray(value.calls)
          ? { turnId: value.turnId, calls: value.calls.map((call) => call.callId), decisions: [] }
          : undefined;
    } else if (payload.key === MetadataKey.approvalContinued || payload.key === MetadataKey.compaction) {
      batch = undefined;
    } else if (payload.key === MetadataKey.approvalDecision && batch?.calls.includes(value.callId ?? '')) {
      // A second decision on a call replaces the first in its place, as a Map keeps it.
      const earlier = batch.decisions.find(([id]) => id === value.callId);
      if (earlier === undefined) batch.decisions.push([value.callId as string, value.approved as boolean]);
      else earlier[1] = value.approved as boolean;
    }
  }
  return batch;
}

function viewOf(batch: HeldBatch | undefined): unknown {
  if (batch === undefined) return undefined;
  return {
    turnId: batch.turnId,
    calls: batch.calls.map((call) => call.callId),
    decisions: [...batch.decisions].map(([callId, decision]) => [callId, decision.approved]),
  };
}

const callId = fc.constantFrom('a', 'b', 'c');
/** A payload, typed as the log's. */
const of = (value: SessionEventPayload): SessionEventPayload => value;

const payload: fc.Arbitrary<SessionEventPayload> = fc.oneof(
  callId.map((id) => of({ type: 'tool_call', callId: id, toolName: 't', arguments: {} })),
  callId.map((id) => of({ type: 'tool_result', callId: id, content: '', isError: false })),
  fc.constant(of({ type: 'user_message', content: [] })),
  fc.constant(of({ type: 'assistant_message', content: [], status: 'complete' })),
  fc.array(callId, { maxLength: 3 }).map((ids) =>
    heldBatchRecord({
      turnId: `turn-${ids.join('')}`,
      toolCallCount: ids.length,
      calls: ids.map((id) => ({ callId: id, toolName: 't', arguments: {}, needsApproval: true })),
      decisions: new Map(),
      expiresAt: undefined,
    }),
  ),
  fc.constant(of({ type: 'metadata', key: MetadataKey.approvalPending, value: { calls: 'malformed' } })),
  fc.tuple(callId, fc.boolean()).map(([id, approved]) => decisionRecord(id, approved, undefined)),
  fc.constant(of({ type: 'metadata', key: MetadataKey.approvalContinued, value: { turnId: 't' } })),
  fc.constant(of({ type: 'metadata', key: MetadataKey.compaction, value: { summary: 's' } })),
  fc.constant(of({ type: 'metadata', key: 'usage', value: {} })),
  fc.constant(of({ type: 'assistant_message', content: [], status: 'incomplete' })),
  fc.constant(of({ type: 'metadata', key: MetadataKey.turnEnded, value: { turnId: 't', status: 'failed' } })),
  fc.constant(of({ type: 'metadata', key: MetadataKey.turnContinued, value: { turnId: 't' } })),
);

/** Whether a front-to-back reading finds no cut turn at the log's end: the rule of readInterruptedTurn. */
function settledFrontToBack(payloads: readonly SessionEventPayload[]): boolean {
  let last: SessionEventPayload | undefined;
  let ended = false;
  for (const payload of payloads) {
    if (payload.type === 'metadata') {
      if (payload.key === MetadataKey.turnEnded || payload.key === MetadataKey.approvalPending) ended = true;
      else if (payload.key === MetadataKey.approvalContinued) ended = false;
      continue;
    }
    last = payload;
    ended = false;
  }
  return last === undefined || ended || (last.type === 'assistant_message' && last.status === 'complete');
}

test('readHeldBatch (read from the end) finds the batch and the decisions a front-to-back reading finds', () => {
  fc.assert(
    fc.property(fc.array(payload, { maxLength: 14 }), (payloads) => {
      expect(viewOf(readHeldBatch(payloads))).toEqual(heldBatchFrontToBack(payloads));
    }),
    { numRuns: 2_000 },
  );
});

test('readInterruptedTurn finds a cut turn exactly where a front-to-back reading finds one', () => {
  fc.assert(
    fc.property(fc.array(payload, { maxLength: 14 }), (payloads) => {
      expect(readInterruptedTurn(payloads) === undefined).toBe(settledFrontToBack(payloads));
    }),
    { numRuns: 2_000 },
  );
});
