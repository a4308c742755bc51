import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import {
  contentText,
  hangingReply,
  messagesOf,
  textReply,
  toolCallReply,
  toolResult,
  usageReply,
} from '../../../test-support/cli-wire.js';
import { jsonLines, runCli, startCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

const harness = useCliHarness();

function print(prompt: string, ...extra: string[]) {
  return runCli({
    args: ['-p', prompt, '--base-url', harness.server.baseURL, ...extra],
    sandbox: harness.sandbox,
  });
}

describe('youyou -p', () => {
  test('reads a file with a tool and prints the answer; the second request carries the file content', async () => {
    await writeFile(path.join(harness.sandbox.workspace, 'notes.txt'), 'the secret word is pineapple\n');
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'read_file', arguments: { path: 'notes.txt' } }),
      (request) =>
        textReply(
          toolResult(request, 'call_1')?.includes('pineapple') ? 'The word is pineapple.' : 'NO FILE CONTENT',
        ),
    );

    const result = await print('what is the secret word?');

    expect(result.stdout).toBe('The word is pineapple.\n');
    expect(result.stderr).toMatch(/✓ read_file notes\.txt/);
    expect(result.code).toBe(0);
    const [first, second] = harness.server.turnRequests();
    expect(first?.path).toBe('/v1/chat/completions');
    expect(toolResult(second!, 'call_1')).toContain('the secret word is pineapple');
    // The session was closed: its memories were extracted.
    expect(harness.server.memoryRequests()).toHaveLength(1);
  });

  test('--json prints every event as one JSON line, ending with turn_complete', async () => {
    await writeFile(path.join(harness.sandbox.workspace, 'a.txt'), 'alpha\n');
    harness.server.reply(
      toolCallReply({ id: 'call_a', name: 'read_file', arguments: { path: 'a.txt' } }),
      textReply('It says ', 'alpha.'),
    );

    const result = await print('read a.txt', '--json');

    expect(result.code).toBe(0);
    const events = jsonLines(result.stdout) as {
      sessionId: string;
      sequence: number;
      payload: { type: string };
    }[];
    expect(events.length).toBeGreaterThan(3);
    for (const event of events) {
      expect(typeof event.sessionId).toBe('string');
      expect(typeof event.sequence).toBe('number');
    }
    const types = events.map((event) => event.payload.type);
    expect(types).toEqual(['tool_call_start', 'tool_call_end', 'text_delta', 'text_delta', 'turn_complete']);
    expect(events.map((event) => event.sequence)).toEqual(
      [...events.map((event) => event.sequence)].sort((a, b) => a - b),
    );
  });

  test('--json emits a usage event per model call with the counts the server reported, and the turn totals', async () => {
    harness.server.reply(
      usageReply({ prompt: 300, completion: 20 }, 'Let me look.'),
      usageReply({ prompt: 1_200, completion: 80, cached: 1_024, reasoning: 16 }, 'Nothing there.'),
    );

    const first = await print('hello', '--json');
    expect(first.code).toBe(0);
    expect(
      (jsonLines(first.stdout) as { payload: Record<string, unknown> }[]).map((event) => event.payload),
    ).toEqual([
      { type: 'text_delta', text: 'Let me look.' },
      {
        type: 'usage',
        purpose: 'turn',
        providerId: 'openai-compatible',
        modelId: 'llama3.2',
        usage: { inputTokens: 300, outputTokens: 20, cachedInputTokens: 0, reasoningTokens: 0 },
      },
      expect.objectContaining({ type: 'turn_complete' }),
    ]);

    const result = await print('and now?', '--json', '--continue');

    expect(result.code).toBe(0);
    const payloads = (jsonLines(result.stdout) as { payload: Record<string, unknown> }[]).map(
      (event) => event.payload,
    );
    const usage = payloads.filter((payload) => payload.type === 'usage');
    expect(usage).toEqual([
      {
        type: 'usage',
        purpose: 'turn',
        providerId: 'openai-compatible',
        modelId: 'llama3.2',
        usage: { inputTokens: 1_200, outputTokens: 80, cachedInputTokens: 1_024, reasoningTokens: 16 },
      },
    ]);
    expect(payloads.at(-1)).toEqual({
      type: 'turn_complete',
      usage: {
        inputTokens: 1_200,
        outputTokens: 80,
        cachedInputTokens: 1_024,
        cacheWriteTokens: 0,
        reasoningTokens: 16,
        modelCalls: 1,
      },
    });
  });

  test('without --json the turn’s tokens follow the answer on stderr; a priced model adds the cost', async () => {
    harness.server.reply(usageReply({ prompt: 2_000, completion: 100, cached: 1_000 }, 'Hi.'));
    const plain = await print('hello');
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe('Hi.\n');
    expect(plain.stderr).toContain('2,000 in (1,000 cached) · 100 out');
    expect(plain.stderr).not.toContain('$');

    // gpt-4o-mini is in the OpenAI catalogue: $0.15 input, $0.075 cached, $0.60 output per million tokens.
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(path.join(harness.sandbox.home, 'config.json'), JSON.stringify({ openaiApi: 'chat' }));
    harness.server.reply(usageReply({ prompt: 2_000, completion: 100, cached: 1_000 }, 'Hi.'));
    const priced = await runCli({
      args: [
        '-p',
        'hello',
        '--provider',
        'openai',
        '--model',
        'gpt-4o-mini',
        '--base-url',
        harness.server.baseURL,
      ],
      sandbox: harness.sandbox,
      env: { OPENAI_API_KEY: 'sk-test-usage' },
    });
    expect(priced.code).toBe(0);
    // (1,000 × 0.15 + 1,000 × 0.075 + 100 × 0.6) / 1,000,000 = $0.000285
    expect(priced.stderr).toContain('2,000 in (1,000 cached) · 100 out · $0.0003');
  });

  test('a path outside the workspace is refused, the model is told, and the answer is still printed', async () => {
    harness.server.reply(
      toolCallReply({ id: 'call_x', name: 'read_file', arguments: { path: '../../etc/passwd' } }),
      textReply('I may not read that file.'),
    );

    const result = await print('show me /etc/passwd via a relative path', '--json');

    expect(result.code).toBe(0);
    const events = jsonLines(result.stdout) as {
      payload: { type: string; output?: { isError: boolean; content: string } };
    }[];
    const end = events.find((event) => event.payload.type === 'tool_call_end');
    expect(end?.payload.output?.isError).toBe(true);
    const sent = toolResult(harness.server.turnRequests()[1]!, 'call_x');
    expect(sent).toMatch(/outside|workspace/i);
    expect(sent).not.toContain('root:');
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
  });

  test('the text answer of a refused path is printed and exits 0', async () => {
    harness.server.reply(
      toolCallReply({ id: 'call_y', name: 'read_file', arguments: { path: '../../etc/passwd' } }),
      textReply('I may not read that file.'),
    );
    const result = await print('read ../../etc/passwd');
    expect(result.stdout).toBe('I may not read that file.\n');
    expect(result.stderr).toMatch(/✗ read_file \.\.\/\.\.\/etc\/passwd/);
    expect(result.code).toBe(0);
  });

  test('a mutating tool without --yes is denied and the model is told how to allow it', async () => {
    harness.server.reply(
      toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'out.txt', content: 'hello\n' } }),
      textReply('I was not allowed to write.'),
    );

    const result = await print('write out.txt');

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('I was not allowed to write.\n');
    expect(existsSync(path.join(harness.sandbox.workspace, 'out.txt'))).toBe(false);
    expect(toolResult(harness.server.turnRequests()[1]!, 'call_w')).toContain(
      'the user did not approve running write_file; in non-interactive mode pass --yes',
    );
  });

  test('with --yes the mutating tool runs', async () => {
    harness.server.reply(
      toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'out.txt', content: 'hello\n' } }),
      textReply('Written.'),
    );

    const result = await print('write out.txt', '--yes');

    expect(result.code).toBe(0);
    expect(await readFile(path.join(harness.sandbox.workspace, 'out.txt'), 'utf8')).toBe('hello\n');
    expect(toolResult(harness.server.turnRequests()[1]!, 'call_w')).not.toContain('did not approve');
    expect(result.stderr).toMatch(/✓ write_file out\.txt/);
  });

  test('Ctrl-C (SIGINT) cancels the turn: the last JSON line is turn_cancelled, exit code 130', async () => {
    harness.server.reply(hangingReply('partial '));
    const running = startCli({
      args: ['-p', 'slow', '--json', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    await vi.waitFor(() => expect(running.stdout()).toContain('text_delta'), {
      timeout: 10_000,
      interval: 20,
    });

    running.child.kill('SIGINT');

    const result = await running.result;
    expect(result.code).toBe(130);
    const types = (jsonLines(result.stdout) as { payload: { type: string } }[]).map(
      (event) => event.payload.type,
    );
    expect(types.at(-1)).toBe('turn_cancelled');
  });

  test('a prompt piped on stdin without -p runs one turn', async () => {
    harness.server.reply(textReply('Piped.'));
    const result = await runCli({
      args: ['--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
      stdin: 'from a pipe\n',
    });
    expect(result.stdout).toBe('Piped.\n');
    const sent = messagesOf(harness.server.turnRequests()[0]!).at(-1);
    expect(sent && contentText(sent)).toBe('from a pipe');
  });
});
