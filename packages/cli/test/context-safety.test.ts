import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  contentText,
  messagesOf,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import type { WireReply, WireRequest } from '../../../test-support/wire-server.js';
import { runCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

/** The CLI's default window for an OpenAI-compatible server. */
const WINDOW = 32_768;
/** A request body over this many characters is over the window at four characters a token. */
const WINDOW_CHARS = WINDOW * 4;

const harness = useCliHarness();

function systemText(request: WireRequest): string {
  const system = messagesOf(request).find(
    (message) => message.role === 'system' || message.role === 'developer',
  );
  return system === undefined ? '' : contentText(system);
}

function isCompaction(request: WireRequest): boolean {
  return systemText(request).startsWith('You are compacting the context');
}

/**
 * Answers like a real API with a 32k window: a request over it gets the 400 `context_length_exceeded` error;
 * compaction requests get a summary; turn requests get `answer(request)`.
 */
function windowedModel(answer: (request: WireRequest) => WireReply): (request: WireRequest) => WireReply {
  return (request) => {
    if (request.rawBody.length > WINDOW_CHARS) {
      return {
        type: 'json',
        status: 400,
        body: {
          error: {
            message: `This model's maximum context length is ${WINDOW} tokens. However, your messages resulted in ${Math.ceil(request.rawBody.length / 4)} tokens.`,
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
          },
        },
      };
    }
    if (isCompaction(request)) return textReply('SUMMARY: the user asked about big.txt.');
    return answer(request);
  };
}

function lastMessage(request: WireRequest): { role: string; text: string } {
  const message = messagesOf(request).at(-1);
  return { role: message?.role ?? '', text: message === undefined ? '' : contentText(message) };
}

describe('the context never wedges in the CLI (32k window)', () => {
  test('a 256 KiB read_file: the turn completes and the next three turns complete', async () => {
    // 2,000 lines of 119 characters: read_file returns all of it, 256 KiB, about 65k tokens.
    const lines = Array.from(
      { length: 2_000 },
      (_, index) => `row ${String(index + 1).padStart(4, '0')} ${'z'.repeat(110)}`,
    );
    await writeFile(path.join(harness.sandbox.workspace, 'big.txt'), `${lines.join('\n')}\n`);
    const model = windowedModel((request) => {
      const last = lastMessage(request);
      if (last.role === 'tool') return textReply('I read big.txt.');
      if (last.text.includes('read big.txt'))
        return toolCallReply({ id: 'call_big', name: 'read_file', arguments: { path: 'big.txt' } });
      return textReply(`answer to ${last.text.slice(0, 20)}`);
    });
    harness.server.reply(...Array.from({ length: 100 }, () => model));

    const first = await runCli({
      args: ['-p', 'read big.txt', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(first.stdout).toBe('I read big.txt.\n');
    expect(first.code).toBe(0);
    const withResult = harness.server
      .turnRequests()
      .find((request) => toolResult(request, 'call_big') !== undefined);
    const result = toolResult(withResult as WireRequest, 'call_big') ?? '';
    // The model saw the head and the tail of the file and a notice of the cut, not 256 KiB.
    expect(result).toContain('row 0001');
    expect(result).toContain('row 2000');
    expect(result).toMatch(/left out/);
    expect(result.length).toBeLessThan(WINDOW_CHARS / 2);

    for (const question of ['question two', 'question three', 'question four']) {
      const next = await runCli({
        args: ['-c', '-p', question, '--base-url', harness.server.baseURL],
        sandbox: harness.sandbox,
      });
      expect(next.stdout).toBe(`answer to ${question}\n`);
      expect(next.code).toBe(0);
    }
    for (const request of harness.server.turnRequests())
      expect(request.rawBody.length).toBeLessThanOrEqual(WINDOW_CHARS);
  }, 120_000);

  test('a 3 MB piped prompt is never sent whole, to the model or to the summariser', async () => {
    const prompt = `${'the quick brown fox jumps over the lazy dog. '.repeat(70_000)}\nWHAT IS THIS?`;
    expect(prompt.length).toBeGreaterThan(3_000_000);
    harness.server.reply(
      ...Array.from({ length: 20 }, () => windowedModel(() => textReply('a lot of foxes'))),
    );

    const result = await runCli({
      args: ['--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
      stdin: prompt,
    });

    expect(result.stdout).toBe('a lot of foxes\n');
    expect(result.code).toBe(0);
    const received = harness.server.turnRequests();
    expect(received.length).toBeGreaterThan(0);
    for (const request of received) expect(request.rawBody.length).toBeLessThanOrEqual(WINDOW_CHARS);
    // The question at the end survived the cut.
    expect(lastMessage(received.at(-1) as WireRequest).text).toContain('WHAT IS THIS?');
    // Memory extraction at close got the cut message too.
    for (const request of harness.server.memoryRequests())
      expect(request.rawBody.length).toBeLessThan(1_000_000);
  }, 120_000);
});
