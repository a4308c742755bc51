import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import {
  contentText,
  hangingReply,
  messagesOf,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import type { WireReply } from '../../../test-support/wire-server.js';
import { useCliHarness } from './support/harness.js';
import { connectStdio, resultText, runTurn, type StdioServe } from './support/mcp-client.js';
import { until } from './support/serve.js';

const harness = useCliHarness();
let serving: StdioServe | undefined;

afterEach(async () => {
  // Whatever a test did, the client met no line on stdout that was not a protocol frame.
  const errors = serving?.errors ?? [];
  await serving?.client.close();
  serving = undefined;
  expect(errors.map((error) => error.message)).toEqual([]);
});

/** `youyou mcp serve` over stdio against the test's model server. */
async function serve(
  options: { args?: string[]; elicit?: Parameters<typeof connectStdio>[0]['elicit'] } = {},
) {
  serving = await connectStdio({
    sandbox: harness.sandbox,
    args: ['--base-url', harness.server.baseURL, ...(options.args ?? [])],
    ...(options.elicit === undefined ? {} : { elicit: options.elicit }),
  });
  return serving;
}

const WRITE_CALL = {
  id: 'call_write',
  name: 'write_file',
  arguments: { path: 'note.txt', content: 'from mcp' },
};

test('run_turn answers with the turn text and a sessionId; the sessionId continues the conversation', async () => {
  const { client } = await serve();
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual(['run_turn']);
  expect(tools[0]?.outputSchema).toBeDefined();

  harness.server.reply(textReply('First ', 'answer.'));
  const first = await runTurn(client, { prompt: 'Remember the word teapot.' });
  expect(first.result.isError).toBeFalsy();
  expect(first.output?.answer).toBe('First answer.');
  expect(first.output?.status).toBe('completed');
  const sessionId = first.output?.sessionId ?? '';
  expect(resultText(first.result)).toContain('First answer.');
  expect(resultText(first.result)).toContain(sessionId);

  harness.server.reply(textReply('Second answer.'));
  const second = await runTurn(client, { prompt: 'Which word?', sessionId });
  expect(second.output).toMatchObject({ answer: 'Second answer.', sessionId, status: 'completed' });
  // The model got the earlier turn's history with the new prompt.
  const sent = messagesOf(harness.server.turnRequests()[1] ?? never());
  const texts = sent.map((message) => `${message.role}:${contentText(message)}`);
  expect(texts).toContain('user:Remember the word teapot.');
  expect(texts).toContain('assistant:First answer.');
  expect(texts.at(-1)).toBe('user:Which word?');
});

test('an unknown or partial sessionId is a tool error, and the model is not called', async () => {
  const { client } = await serve();
  harness.server.reply(textReply('Started.'));
  const first = await runTurn(client, { prompt: 'Start.' });
  const sessionId = first.output?.sessionId ?? '';
  for (const given of ['no-such-session', sessionId.slice(0, 8)]) {
    const { result } = await runTurn(client, { prompt: 'Go on.', sessionId: given });
    expect(result.isError).toBe(true);
  }
  const { result } = await runTurn(client, { prompt: '   ' });
  expect(result.isError).toBe(true);
  expect(harness.server.turnRequests()).toHaveLength(1);
});

test('a write_file call runs once the elicitation-capable client accepts it, reported as progress', async () => {
  const { client, questions } = await serve({ elicit: () => ({ action: 'accept', content: {} }) });
  harness.server.reply(toolCallReply(WRITE_CALL), textReply('Written.'));
  const progress: string[] = [];
  const { output } = await runTurn(
    client,
    { prompt: 'Write the note.' },
    { onprogress: (update) => progress.push(update.message ?? '') },
  );
  expect(output?.answer).toBe('Written.');
  expect(questions).toHaveLength(1);
  // The client asked for progress: it heard of the call as it ran.
  expect(progress.filter((message) => message.includes('write_file'))).toHaveLength(2);
  expect(questions[0]?.message).toContain('write_file');
  expect(await readFile(path.join(harness.sandbox.workspace, 'note.txt'), 'utf8')).toBe('from mcp');
});

test('a write_file call the client declines does not run, and the model reads that it was denied', async () => {
  const { client, questions } = await serve({ elicit: () => ({ action: 'decline' }) });
  harness.server.reply(toolCallReply(WRITE_CALL), textReply('Understood.'));
  const { output } = await runTurn(client, { prompt: 'Write the note.' });
  expect(output?.answer).toBe('Understood.');
  expect(questions).toHaveLength(1);
  expect(existsSync(path.join(harness.sandbox.workspace, 'note.txt'))).toBe(false);
  const denial = toolResult(harness.server.turnRequests()[1] ?? never(), WRITE_CALL.id);
  expect(denial).toMatch(/denied/);
});

test('a question the client leaves unanswered runs nothing once the approval window passes', async () => {
  await mkdir(harness.sandbox.home, { recursive: true });
  // The shortest window the config allows: the gate gives up on the question a little before it.
  await writeFile(path.join(harness.sandbox.home, 'config.json'), JSON.stringify({ toolTimeoutMs: 1000 }));
  const { client, questions } = await serve({ elicit: () => new Promise(() => undefined) });
  harness.server.reply(toolCallReply(WRITE_CALL), textReply('Nobody answered.'));
  const { output } = await runTurn(client, { prompt: 'Write the note.' });
  expect(output?.answer).toBe('Nobody answered.');
  expect(questions).toHaveLength(1);
  expect(existsSync(path.join(harness.sandbox.workspace, 'note.txt'))).toBe(false);
  expect(toolResult(harness.server.turnRequests()[1] ?? never(), WRITE_CALL.id)).toContain('did not answer');
});

test('a turn whose model call fails is a tool error that still names its session', async () => {
  const { client } = await serve();
  // No reply scripted: the model server answers 400.
  const { result, output } = await runTurn(client, { prompt: 'Hello?' });
  expect(result.isError).toBe(true);
  expect(output?.status).toBe('failed');
  expect(output?.sessionId).toMatch(/\S/);
  expect(resultText(result)).toContain('no turn reply scripted');
});

test('without elicitation a mutating call is refused; with --yes it runs', async () => {
  const { client } = await serve();
  harness.server.reply(toolCallReply(WRITE_CALL), textReply('Refused.'));
  await runTurn(client, { prompt: 'Write the note.' });
  expect(existsSync(path.join(harness.sandbox.workspace, 'note.txt'))).toBe(false);
  const refusal = toolResult(harness.server.turnRequests()[1] ?? never(), WRITE_CALL.id);
  expect(refusal).toContain('--yes');
  await client.close();

  const withYes = await serve({ args: ['--yes'] });
  harness.server.reply(toolCallReply(WRITE_CALL), textReply('Written.'));
  await runTurn(withYes.client, { prompt: 'Write the note.' });
  expect(await readFile(path.join(harness.sandbox.workspace, 'note.txt'), 'utf8')).toBe('from mcp');
});

test('a deny rule of the config refuses a call even with --yes and an accepting client', async () => {
  await mkdir(harness.sandbox.home, { recursive: true });
  await writeFile(
    path.join(harness.sandbox.home, 'config.json'),
    JSON.stringify({ approval: { deny: ['write_file(note.txt)'] } }),
  );
  const { client } = await serve({ args: ['--yes'], elicit: () => ({ action: 'accept', content: {} }) });
  harness.server.reply(toolCallReply(WRITE_CALL), textReply('Refused.'));
  await runTurn(client, { prompt: 'Write the note.' });
  expect(existsSync(path.join(harness.sandbox.workspace, 'note.txt'))).toBe(false);
  expect(toolResult(harness.server.turnRequests()[1] ?? never(), WRITE_CALL.id)).toContain('deny rule');
});

test('a second call on a busy session is a tool error; another session runs meanwhile', async () => {
  const { client } = await serve();
  harness.server.reply(textReply('Started.'));
  const sessionId = (await runTurn(client, { prompt: 'Start.' })).output?.sessionId ?? '';

  let release: (reply: WireReply) => void = () => undefined;
  harness.server.reply(() => new Promise<WireReply>((resolve) => (release = resolve)));
  const held = runTurn(client, { prompt: 'Take your time.', sessionId });
  await until(
    () => harness.server.turnRequests().length === 2,
    () => 'the held turn to reach the model',
  );
  const busy = await runTurn(client, { prompt: 'Me too.', sessionId });
  expect(busy.result.isError).toBe(true);
  expect(resultText(busy.result)).toContain(sessionId);

  harness.server.reply(textReply('Other session.'));
  const other = await runTurn(client, { prompt: 'Elsewhere.' });
  expect(other.output?.answer).toBe('Other session.');
  expect(other.output?.sessionId).not.toBe(sessionId);

  release(textReply('Done at last.'));
  expect((await held).output).toMatchObject({ answer: 'Done at last.', sessionId });
  expect(harness.server.turnRequests()).toHaveLength(3);
});

test("the answer streams as progress; the client's cancellation of the call cancels the turn", async () => {
  const { client } = await serve();
  harness.server.reply(hangingReply('Thinking ', 'hard'));
  const controller = new AbortController();
  const messages: string[] = [];
  const call = runTurn(
    client,
    { prompt: 'Never finish.' },
    { signal: controller.signal, onprogress: ({ message }) => messages.push(message ?? '') },
  );
  // The answer so far arrives while the model's stream is still open.
  await until(
    () => messages.join('').includes('Thinking hard'),
    () => `the answer among ${JSON.stringify(messages)}`,
  );
  controller.abort();
  await expect(call).rejects.toThrow();
  // The turn let go of the model's stream: the server saw its client leave.
  await harness.server.wire.clientClosed();
});

test('with a progressToken, a running command’s output arrives as progress before it ends, escaped', async () => {
  const { client } = await serve({ args: ['--yes'] });
  const gate = path.join(harness.sandbox.workspace, 'gate');
  const command =
    "printf '\\033]0;owned\\007\\033[2J%s-%s\\n' hostile line; printf '%s-%s\\n' first line; " +
    "while [ ! -e gate ]; do sleep 0.05; done; printf '%s-%s\\n' gate opened";
  harness.server.reply(toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command } }), (request) =>
    textReply(`Ran it: ${toolResult(request, 'call_sh')?.includes('gate-opened') ? 'whole' : 'cut'}.`),
  );
  const progress: { progress: number; message: string }[] = [];
  let answered = false;
  const call = runTurn(
    client,
    { prompt: 'Run it.' },
    {
      onprogress: ({ progress: step, message }) => progress.push({ progress: step, message: message ?? '' }),
    },
  ).finally(() => {
    answered = true;
  });
  const messages = (): string[] => progress.map((entry) => entry.message);
  await until(
    () => messages().some((message) => message.includes('first-line')),
    () => `the live line among ${JSON.stringify(messages())}`,
  );
  // The command is still blocked on the gate: the line came while it ran.
  expect(answered).toBe(false);
  expect(messages().join('')).not.toContain('gate-opened');
  expect(messages().join('')).toContain('\\e]0;owned\\a\\e[2Jhostile-line');

  await writeFile(gate, '');
  const { output } = await call;
  expect(output?.answer).toBe('Ran it: whole.');
  const all = messages();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: no raw ESC or BEL may reach the client.
  expect(all.join('')).not.toMatch(/[\x07\x1b]/);
  const lastOutput = all.findLastIndex((message) => message.includes('gate-opened'));
  expect(lastOutput).toBeGreaterThan(-1);
  // The output came between the call's start and its end.
  expect(all.indexOf('shell running')).toBeLessThan(lastOutput);
  expect(all.indexOf('shell done')).toBeGreaterThan(lastOutput);
  // Progress only grows, as MCP requires.
  const steps = progress.map((entry) => entry.progress);
  expect(steps).toEqual([...steps].sort((a, b) => a - b));
  expect(new Set(steps).size).toBe(steps.length);
});

test('a command that floods its output costs a few bounded progress messages, the newest text kept', async () => {
  const { client } = await serve({ args: ['--yes'] });
  // About 590 KB of numbered lines in one go.
  harness.server.reply(
    toolCallReply({ id: 'call_seq', name: 'shell', arguments: { command: 'seq 1 100000' } }),
    textReply('Counted.'),
  );
  const messages: string[] = [];
  await runTurn(client, { prompt: 'Count.' }, { onprogress: ({ message }) => messages.push(message ?? '') });
  const output = messages.filter((message) => message.startsWith('shell output: '));
  expect(output.length).toBeGreaterThan(0);
  for (const message of output) expect(message.length).toBeLessThanOrEqual(4096 + 'shell output: …'.length);
  expect(output.at(-1)).toMatch(/\n99999\n100000\n$/);
});

function never(): never {
  throw new Error('the model server did not receive the request');
}
