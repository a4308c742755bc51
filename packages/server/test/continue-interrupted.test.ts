/**
 * Issue 26 in the server: a session whose last turn a crash cut (the log a killed process leaves, in a real
 * SQLite file) is continued by the server that takes it — at once with `continueInterrupted: 'auto'`, for the
 * client that follows the session (its SSE events, its UI message stream), or on `POST …/continue` otherwise.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionEventPayload, ToolHandler } from '@youyou/agent';
import { openSqliteStorage } from '@youyou/sqlite';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { TENANT_METADATA_KEY } from '../src/sessions/tenants.js';
import { type Harness, isTurnEnd, readUntil, startHarness } from './support/harness.js';

let folder: string;
let harness: Harness | undefined;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'youyou-cut-'));
});

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await rm(folder, { recursive: true, force: true });
});

/** A read-only tool, counting its runs. */
function lookupTool(runs: string[]): ToolHandler {
  return {
    name: 'lookup',
    description: 'looks a word up',
    parametersSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    isMutating: false,
    execute: async (input) => {
      const { q } = input.arguments as { q: string };
      runs.push(q);
      return { content: `found ${q}`, isError: false };
    },
  };
}

/** Alice's session as a process killed while its lookup ran leaves it. */
async function cutSession(path: string): Promise<string> {
  const storage = await openSqliteStorage(path);
  const payloads: SessionEventPayload[] = [
    {
      type: 'metadata',
      key: 'session_config',
      value: { modelId: 'scripted-model', memoryNamespace: 'tenant:alice' },
    },
    { type: 'metadata', key: TENANT_METADATA_KEY, value: 'alice' },
    { type: 'user_message', content: [{ type: 'text', text: 'look it up' }] },
    { type: 'assistant_message', content: [{ type: 'text', text: 'Looking.' }], status: 'complete' },
    { type: 'tool_call', callId: 'c1', toolName: 'lookup', arguments: { q: 'word' } },
  ];
  for (const payload of payloads)
    await storage.sessions.saveEvent('cut-session', { timestamp: new Date(), payload });
  await storage.close();
  return 'cut-session';
}

test("with 'auto', a client following the session's events sees the cut turn continued on that stream", async () => {
  const path = join(folder, 'agent.db');
  const sessionId = await cutSession(path);
  const runs: string[] = [];
  harness = await startHarness({
    databasePath: path,
    continueInterrupted: 'auto',
    tools: [lookupTool(runs)],
    responses: [[{ type: 'text', text: 'Found it.' }]],
  });
  const events = await readUntil(await harness.request(`/sessions/${sessionId}/events`), isTurnEnd);
  expect(events.map((message) => message.event)).toEqual([
    'turn_continued',
    'tool_call_start',
    'tool_call_end',
    'text_delta',
    'turn_complete',
  ]);
  expect(runs).toEqual(['word']);
  const history = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
    messages: { type: string }[];
  };
  expect(history.messages.map((message) => message.type)).toEqual([
    'user',
    'assistant',
    'tool_call',
    'tool_result',
    'assistant',
  ]);
});

test("with 'auto', a useChat client reconnecting to the session's stream gets the continued turn", async () => {
  const path = join(folder, 'agent.db');
  const sessionId = await cutSession(path);
  const runs: string[] = [];
  harness = await startHarness({
    databasePath: path,
    continueInterrupted: 'auto',
    tools: [lookupTool(runs)],
    responses: [[{ type: 'text', text: 'Found it.' }]],
  });
  const response = await harness.request(`/ui/chat/${sessionId}/stream`);
  expect(response.status).toBe(200);
  const chunks = (await response.text())
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)) as { type: string; delta?: string });
  expect(chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.delta)).toEqual([
    'Found it.',
  ]);
  expect(chunks.map((chunk) => chunk.type)).toContain('tool-output-available');
  expect(chunks.at(-1)?.type).toBe('finish');
  expect(runs).toEqual(['word']);
});

test("'on-request' leaves the cut turn until POST …/continue, whose stream runs the rest of it", async () => {
  const path = join(folder, 'agent.db');
  const sessionId = await cutSession(path);
  const runs: string[] = [];
  harness = await startHarness({
    databasePath: path,
    tools: [lookupTool(runs)],
    responses: [[{ type: 'text', text: 'Found it.' }]],
  });
  // Reading the history opens nothing and continues nothing; it says the last turn did not end.
  const before = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
    unfinishedTurn: boolean;
  };
  expect(before.unfinishedTurn).toBe(true);
  expect(runs).toEqual([]);
  const continued = await readUntil(
    await harness.request(`/sessions/${sessionId}/continue`, { method: 'POST', json: {} }),
    isTurnEnd,
  );
  expect(continued.map((message) => message.event)).toEqual([
    'turn_continued',
    'tool_call_start',
    'tool_call_end',
    'text_delta',
    'turn_complete',
  ]);
  expect(runs).toEqual(['word']);
  const after = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
    unfinishedTurn: boolean;
  };
  expect(after.unfinishedTurn).toBe(false);
});

test("'auto' with a message sent as the server takes the session: the message follows the continued turn", async () => {
  const path = join(folder, 'agent.db');
  const sessionId = await cutSession(path);
  const runs: string[] = [];
  harness = await startHarness({
    databasePath: path,
    continueInterrupted: 'auto',
    tools: [lookupTool(runs)],
    responses: [[{ type: 'text', text: 'Found it.' }], [{ type: 'text', text: 'You are welcome.' }]],
  });
  const answer = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'thanks' } }),
    isTurnEnd,
  );
  expect(answer.at(-1)?.event).toBe('turn_complete');
  expect(
    answer.filter((message) => message.event === 'text_delta').map((message) => message.data.payload.text),
  ).toEqual(['You are welcome.']);
  const history = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
    messages: { type: string }[];
  };
  expect(history.messages.map((message) => message.type)).toEqual([
    'user',
    'assistant',
    'tool_call',
    'tool_result',
    'assistant',
    'user',
    'assistant',
  ]);
});

test('a continueInterrupted that is neither mode is refused when the server is made', async () => {
  await expect(startHarness({ continueInterrupted: 'always' as 'auto' })).rejects.toThrow(
    /continueInterrupted/,
  );
});
