import type { ToolHandler } from '@youyou/agent';
import { afterEach, expect, test } from 'vitest';
import { createSession, type Harness, startHarness } from './support/harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The SSE frames of a text as the client received them (each ends where a blank line does). */
function framesOf(text: string): string[] {
  return text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => `${frame}\n\n`);
}

/** A frame's `id:`. */
function idOf(frame: string): string {
  return /^id: (.*)$/m.exec(frame)?.[1] ?? '';
}

/** A frame's `event:`. */
function eventOf(frame: string): string {
  return /^event: (.*)$/m.exec(frame)?.[1] ?? '';
}

/** Sends a message and reads the turn's whole SSE response as the bytes it was (the server ends it). */
async function sendAndRead(target: Harness, sessionId: string, content: string): Promise<string[]> {
  const response = await target.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content },
  });
  expect(response.status).toBe(200);
  return framesOf(await response.text());
}

/** Tails the session from `lastEventId` and reads its raw frames until `count` of them came (or a resync). */
async function tailFrames(
  target: Harness,
  sessionId: string,
  lastEventId: string,
  count: number,
): Promise<string[]> {
  const response = await target.request(`/sessions/${sessionId}/events`, {
    headers: { 'last-event-id': lastEventId },
  });
  expect(response.status).toBe(200);
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    const frames = framesOf(text.slice(0, text.lastIndexOf('\n\n') + 2));
    if (frames.length >= count || frames.some((frame) => eventOf(frame) === 'resync')) {
      // Leaving the loop cancels the body: the tail would stay open.
      return frames;
    }
  }
  return framesOf(text);
}

/** A read-only tool whose answer has text outside Latin-1 (two-byte strings in the journal). */
const lookupTool: ToolHandler = {
  name: 'lookup',
  description: 'looks a word up',
  parametersSchema: { type: 'object', properties: { word: { type: 'string' } } },
  isMutating: false,
  execute: async () => ({ content: 'café — 東京 — 🙂', isError: false }),
};

test('a client reconnecting with Last-Event-ID after its turns finished gets the rest of them byte for byte', async () => {
  harness = await startHarness({
    tools: [lookupTool],
    responses: [
      [{ type: 'tool_call', toolName: 'lookup', arguments: { word: 'naïve "quoted"\n' }, callId: 'call_1' }],
      [
        { type: 'text', text: 'Found: ' },
        { type: 'text', text: 'café 🙂' },
      ],
      [{ type: 'error', error: new Error('upstream down: key sk-secret at 10.0.0.7') }],
    ],
  });
  const sessionId = await createSession(harness);
  const first = await sendAndRead(harness, sessionId, 'Look it up');
  const second = await sendAndRead(harness, sessionId, 'Again');
  expect(first.map(eventOf)).toContain('tool_call_end');
  expect(first.at(-1)).toMatch(/^event: turn_complete$/m);
  expect(second.map(eventOf)).toContain('error');
  const live = [...first, ...second];
  expect(live.join('')).not.toContain('sk-secret');

  // Both turns are over: what the server kept of them is their sent form. A client that saw each first k frames
  // reconnects and gets exactly the frames it had not seen, byte for byte.
  for (const seen of [1, 3, first.length, first.length + 1]) {
    const rest = await tailFrames(harness, sessionId, idOf(live[seen - 1] ?? ''), live.length - seen);
    expect(rest).toEqual(live.slice(seen));
  }
  // The error went out as its code and a fixed sentence, live and replayed.
  const replayedError = second.find((frame) => eventOf(frame) === 'error') ?? '';
  expect(replayedError).toContain('PROVIDER_ERROR');
});

test('past journalMaxBytes the finished turns of the session idle the longest are dropped: a reconnect into them is told to resync', async () => {
  // Each turn keeps ~4 KB (its one long delta); the budget holds one turn, not two.
  harness = await startHarness({
    limits: { journalMaxBytes: 6_000 },
    responses: [
      [{ type: 'text', text: 'a'.repeat(4_000) }],
      [{ type: 'text', text: 'b'.repeat(4_000) }],
      [{ type: 'text', text: 'c'.repeat(10) }],
    ],
  });
  const older = await createSession(harness);
  const newer = await createSession(harness);
  const olderTurn = await sendAndRead(harness, older, 'First');
  const newerTurn = await sendAndRead(harness, newer, 'Second');

  // The newer session's finished turn is kept: a reconnect within it gets the rest byte for byte.
  const rest = await tailFrames(harness, newer, idOf(newerTurn[0] ?? ''), newerTurn.length - 1);
  expect(rest).toEqual(newerTurn.slice(1));

  // The older session's turn was dropped: its client is told to reload the history (resync), not replayed a gap.
  const dropped = await tailFrames(harness, older, idOf(olderTurn[0] ?? ''), 1);
  expect(dropped.map(eventOf)).toEqual(['resync']);
  const resync = JSON.parse(/^data: (.*)$/m.exec(dropped[0] ?? '')?.[1] ?? '{}') as { sequence: number };
  expect(resync.sequence).toBeGreaterThanOrEqual(Number(idOf(olderTurn[0] ?? '')));
  expect(dropped.join('')).not.toContain('aaaa');

  // The older session goes on: its next turn streams, numbered after everything it had.
  const next = await sendAndRead(harness, older, 'Third');
  expect(next.at(-1)).toMatch(/^event: turn_complete$/m);
  expect(Number(idOf(next[0] ?? ''))).toBeGreaterThan(Number(idOf(olderTurn.at(-1) ?? '')));
});

/**
 * How many finished turns of one session the server keeps under `journalMaxBytes` when every answer is `text`:
 * turns are sent until a reconnect into the first one is told to resync (its turn was dropped for the budget).
 */
async function turnsKeptUnder(journalMaxBytes: number, text: string): Promise<number> {
  const most = 6;
  const target = await startHarness({
    limits: { journalMaxBytes },
    responses: Array.from({ length: most }, () => [{ type: 'text' as const, text }]),
  });
  harness = target;
  const sessionId = await createSession(target);
  const firstTurn = await sendAndRead(target, sessionId, 'Turn 1');
  for (let turn = 2; turn <= most; turn++) {
    await sendAndRead(target, sessionId, `Turn ${turn}`);
    const rest = await tailFrames(target, sessionId, idOf(firstTurn[0] ?? ''), firstTurn.length - 1);
    if (rest.map(eventOf).includes('resync')) {
      await target.close();
      harness = undefined;
      return turn - 1;
    }
  }
  throw new Error(`the budget kept all ${most} turns`);
}

test('journalMaxBytes counts text above U+00FF at two bytes a character, as V8 keeps it: the budget holds half as many such turns', async () => {
  // Each turn keeps its 4,000-character answer and ~300 bytes more (its turn_complete, each event's 64 bytes).
  // Latin-1 text, accents and all, counts 4,300 bytes a turn: 18,000 bytes hold 4 turns. Chinese (or emoji) text
  // of the same length counts 8,300: the same budget holds 2.
  const latin1 = await turnsKeptUnder(18_000, 'café'.repeat(1_000));
  const wide = await turnsKeptUnder(18_000, '東京'.repeat(2_000));
  expect(latin1).toBe(4);
  expect(wide).toBe(latin1 / 2);
});
