import type { SessionEvent, SessionStorage, ToolHandler } from '@youyou/agent';
import { afterEach, expect, test } from 'vitest';
import {
  createSession,
  deployTool,
  type Harness,
  isTurnEnd,
  readSse,
  readUntil,
  startHarness,
} from './support/harness.js';

// Each way a continuation after approvals cannot start answers with its own status and code (none of them
// the 202 `{ continued: false }` that only means "other calls still wait for a decision").

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A promise with its resolve at hand. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/**
 * The storage with its `saveEvent` of an approval decision handed to `onDecision` (the real write runs when
 * that resolves); everything else goes straight to the storage.
 */
function onDecisionSave(
  onDecision: (write: () => Promise<void>) => Promise<void>,
): (storage: SessionStorage) => SessionStorage {
  return (storage) =>
    new Proxy(storage, {
      get(target, key) {
        if (key === 'saveEvent') {
          return (sessionId: string, event: SessionEvent) => {
            const write = () => target.saveEvent(sessionId, event);
            const payload = event.payload;
            const decision = payload.type === 'metadata' && payload.key === 'approval_decision';
            return decision ? onDecision(write) : write();
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
}

/** A session of `harness` whose turn is suspended on one call of `deploy` (id call_1). */
async function suspendedSession(current: Harness): Promise<string> {
  const sessionId = await createSession(current);
  const first = await readUntil(
    await current.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Ship' } }),
    isTurnEnd,
  );
  expect(first.at(-1)?.event).toBe('turn_suspended');
  return sessionId;
}

const DEPLOY_CALL = [
  { type: 'tool_call' as const, toolName: 'deploy', arguments: { service: 'web' }, callId: 'call_1' },
];

/** The status and error code of a JSON error answer. */
async function failure(response: Response): Promise<{ status: number; code: string; text: string }> {
  const text = await response.text();
  return {
    status: response.status,
    code: (JSON.parse(text) as { error: { code: string } }).error.code,
    text,
  };
}

test('continue with no suspended turn is 409 NOTHING_TO_CONTINUE, before and after a turn', async () => {
  harness = await startHarness({ responses: [[{ type: 'text', text: 'Hello.' }]] });
  const sessionId = await createSession(harness);
  const fresh = await failure(await harness.request(`/sessions/${sessionId}/continue`, { method: 'POST' }));
  expect([fresh.status, fresh.code]).toEqual([409, 'NOTHING_TO_CONTINUE']);
  await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'hi' } }),
    isTurnEnd,
  );
  const after = await failure(await harness.request(`/sessions/${sessionId}/continue`, { method: 'POST' }));
  expect([after.status, after.code]).toEqual([409, 'NOTHING_TO_CONTINUE']);
});

test('continue while the continued turn still runs is 409 TURN_BUSY, and the running turn ends normally', async () => {
  const started = deferred();
  const release = deferred();
  const slowDeploy: ToolHandler = {
    ...deployTool(),
    execute: async () => {
      started.resolve();
      await release.promise;
      return { content: 'deployed', isError: false };
    },
  };
  harness = await startHarness({
    tools: [slowDeploy],
    responses: [DEPLOY_CALL, [{ type: 'text', text: 'Done.' }]],
  });
  const sessionId = await suspendedSession(harness);
  const approved = await harness.request(`/sessions/${sessionId}/approvals/call_1`, {
    method: 'POST',
    json: { approved: true },
  });
  expect(approved.status).toBe(200);
  const events = readSse(approved);
  await started.promise;
  const busy = await failure(await harness.request(`/sessions/${sessionId}/continue`, { method: 'POST' }));
  expect([busy.status, busy.code]).toEqual([409, 'TURN_BUSY']);
  release.resolve();
  const seen: string[] = [];
  for await (const message of events) {
    seen.push(message.event ?? '');
    if (isTurnEnd(message)) break;
  }
  expect(seen.at(-1)).toBe('turn_complete');
});

test('a session closed between the decision and the continuation is 409 SESSION_CLOSED; the tool never runs', async () => {
  const ran: unknown[] = [];
  const decisionHeld = deferred();
  const releaseDecision = deferred();
  harness = await startHarness({
    maxActiveSessions: 1,
    tools: [deployTool(ran)],
    responses: [DEPLOY_CALL],
    wrapStorage: onDecisionSave(async (write) => {
      decisionHeld.resolve();
      await releaseDecision.promise;
      await write();
    }),
  });
  const sessionId = await suspendedSession(harness);
  const approval = harness.request(`/sessions/${sessionId}/approvals/call_1`, {
    method: 'POST',
    json: { approved: true },
  });
  await decisionHeld.promise;
  // A second session needs the one slot: the suspended session, idle, is closed to free it.
  const other = harness.request('/sessions', { method: 'POST', json: {} });
  for (;;) {
    const state = (await (await harness.request(`/sessions/${sessionId}`)).json()) as { active: boolean };
    if (!state.active) break;
  }
  releaseDecision.resolve();
  const closed = await failure(await approval);
  expect([closed.status, closed.code]).toEqual([409, 'SESSION_CLOSED']);
  expect((await other).status).toBe(201);
  expect(ran).toEqual([]);
});

test('a storage failure while the decision is saved is 503 STORAGE_ERROR with a fixed sentence, not the storage text', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    tools: [deployTool(ran)],
    responses: [DEPLOY_CALL],
    wrapStorage: onDecisionSave(async () => {
      throw new Error('disk full at /srv/secret-volume/agent.db');
    }),
  });
  const sessionId = await suspendedSession(harness);
  const broken = await failure(
    await harness.request(`/sessions/${sessionId}/approvals/call_1`, {
      method: 'POST',
      json: { approved: true },
    }),
  );
  expect([broken.status, broken.code]).toEqual([503, 'STORAGE_ERROR']);
  expect(broken.text).not.toContain('secret-volume');
  expect(ran).toEqual([]);
});
