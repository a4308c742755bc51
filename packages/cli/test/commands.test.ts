import { mkdir, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { contentText, messagesOf, textReply } from '../../../test-support/cli-wire.js';
import { jsonLines, runCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

const harness = useCliHarness();

function cli(...args: string[]) {
  return runCli({ args, sandbox: harness.sandbox });
}

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/** True when something listens on Ollama's port here, so the default cannot be shown to fail. */
async function ollamaIsRunning(): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: 11434 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const OLLAMA_RUNNING = await ollamaIsRunning();

async function writeConfig(config: unknown): Promise<void> {
  await mkdir(harness.sandbox.home, { recursive: true });
  await writeFile(path.join(harness.sandbox.home, 'config.json'), JSON.stringify(config));
}

/** Runs one -p turn answered with `answer`; resolves with the session id the JSON events carry. */
async function turn(prompt: string, answer: string): Promise<string> {
  harness.server.reply(textReply(answer));
  const result = await cli('-p', prompt, '--json', '--base-url', harness.server.baseURL);
  expect(result.code).toBe(0);
  const first = jsonLines(result.stdout)[0] as { sessionId: string };
  return first.sessionId;
}

describe('youyou without a model server', () => {
  test('says in one sentence that the server cannot be reached, and how to fix it; exit code 2', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;

    const result = await cli('-p', 'hello', '--base-url', url);

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `youyou: cannot reach the model server at ${url} — start it or correct --base-url, or pass --provider openai with OPENAI_API_KEY set.\n`,
    );
  });

  test.skipIf(OLLAMA_RUNNING)('the default is a local Ollama, named in the message', async () => {
    const result = await cli('-p', 'hello');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'youyou: cannot reach the model server at http://127.0.0.1:11434/v1 — start Ollama (ollama serve) or pass --provider openai with OPENAI_API_KEY set.\n',
    );
  });
});

describe('arguments and configuration', () => {
  test('an unknown flag is a usage error with exit code 2', async () => {
    const result = await cli('--frobnicate');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("youyou: unknown option '--frobnicate'\nRun 'youyou --help' for usage.\n");
  });

  test('--help and --version', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(0);
    for (const flag of [
      '-p',
      '--json',
      '--continue',
      '--provider',
      '--model',
      '--base-url',
      '--cwd',
      '--yes',
    ]) {
      expect(help.stdout).toContain(flag);
    }
    const version = await cli('--version');
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  test('the config file sets the server and model; a flag overrides the model', async () => {
    await writeConfig({ provider: 'compatible', baseUrl: harness.server.baseURL, model: 'qwen3:8b' });
    harness.server.reply(textReply('from config'), textReply('from flag'));

    expect((await cli('-p', 'one')).stdout).toBe('from config\n');
    expect((await cli('-p', 'two', '--model', 'llama3.1')).stdout).toBe('from flag\n');

    const models = harness.server.turnRequests().map((request) => (request.body as { model: string }).model);
    expect(models).toEqual(['qwen3:8b', 'llama3.1']);
  });

  test('the environment beats the config file', async () => {
    await writeConfig({ model: 'from-file' });
    harness.server.reply(textReply('ok'));
    const result = await runCli({
      args: ['-p', 'hi', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
      env: { YOUYOU_MODEL: 'from-env' },
    });
    expect(result.code).toBe(0);
    expect(harness.server.turnRequests()[0]?.body).toMatchObject({ model: 'from-env' });
  });

  test('a broken config file is named with what is wrong; exit code 2', async () => {
    await writeConfig({ provider: 'ollama' });
    const result = await cli('-p', 'hi');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `youyou: ${path.join(harness.sandbox.home, 'config.json')}: "provider" must be one of openai, anthropic, compatible, got "ollama"\n`,
    );
  });

  test('--provider openai without OPENAI_API_KEY says what to set', async () => {
    const result = await cli('-p', 'hi', '--provider', 'openai');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^youyou: --provider openai needs an API key: set OPENAI_API_KEY/);
  });

  test('an MCP server that cannot start and a broken skill are warnings; the turn still runs', async () => {
    await writeConfig({
      mcpServers: { broken: { command: path.join(harness.sandbox.root, 'no-such-program') } },
    });
    await mkdir(path.join(harness.sandbox.workspace, '.youyou', 'skills', 'bad'), { recursive: true });
    await writeFile(
      path.join(harness.sandbox.workspace, '.youyou', 'skills', 'bad', 'SKILL.md'),
      'no front matter\n',
    );
    harness.server.reply(textReply('fine'));

    const result = await cli('-p', 'hi', '--base-url', harness.server.baseURL);

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('fine\n');
    expect(result.stderr).toMatch(/youyou: warning: MCP server "broken"/);
    expect(result.stderr).toMatch(/youyou: warning: skill .*bad.*SKILL\.md: no front matter/);
  });

  test('a skill from the workspace is used when the prompt invokes it', async () => {
    const folder = path.join(harness.sandbox.workspace, '.youyou', 'skills', 'haiku');
    await mkdir(folder, { recursive: true });
    await writeFile(
      path.join(folder, 'SKILL.md'),
      '---\nname: haiku\ndescription: Answer in a haiku.\n---\nAnswer in exactly one haiku.\n',
    );
    harness.server.reply(textReply('an old silent pond'));

    const result = await cli('-p', '/haiku about frogs', '--base-url', harness.server.baseURL);

    expect(result.code).toBe(0);
    const sent = messagesOf(harness.server.turnRequests()[0]!).map(contentText).join('\n');
    expect(sent).toContain('Answer in exactly one haiku.');
  });

  test('--cwd sets the workspace the tools see', async () => {
    const other = path.join(harness.sandbox.root, 'other');
    await mkdir(other);
    harness.server.reply(textReply('ok'));
    await cli('-p', 'where am I?', '--cwd', other, '--base-url', harness.server.baseURL);
    // The environment is the dynamic prompt part, the system message right before the user's.
    const messages = messagesOf(harness.server.turnRequests()[0]!);
    expect(messages.at(-2)?.role).toBe('system');
    expect(contentText(messages.at(-2)!)).toContain(`cwd: ${other}`);
  });
});

describe('sessions', () => {
  test('--continue -p sends the earlier context again', async () => {
    const id = await turn('my name is Ada', 'Hello Ada.');
    harness.server.reply(textReply('You are Ada.'));

    const result = await cli('--continue', '-p', 'who am I?', '--base-url', harness.server.baseURL);

    expect(result.stdout).toBe('You are Ada.\n');
    const texts = messagesOf(harness.server.turnRequests()[1]!)
      .filter((message) => message.role !== 'system')
      .map(contentText);
    expect(texts).toEqual(['my name is Ada', 'Hello Ada.', 'who am I?']);
    const again = jsonLines((await cli('sessions', '--json')).stdout) as {
      sessionId: string;
      messageCount: number;
    }[];
    expect(again).toHaveLength(1);
    expect(again[0]?.sessionId).toBe(id);
  });

  test('sessions lists newest first, --search filters, resume takes an id prefix', async () => {
    const first = await turn('about apples', 'Apples.');
    const second = await turn('about pears', 'Pears.');

    const listing = await cli('sessions');
    expect(listing.code).toBe(0);
    const lines = listing.stdout.trim().split('\n');
    expect(lines[1]).toContain(second.slice(0, 8));
    expect(lines[1]).toContain('about pears');
    expect(lines[2]).toContain(first.slice(0, 8));

    const search = await cli('sessions', '--search', 'apples');
    expect(search.stdout).toContain(first.slice(0, 8));
    expect(search.stdout).not.toContain(second.slice(0, 8));

    harness.server.reply(textReply('Still apples.'));
    const resumed = await cli(
      'resume',
      first.slice(0, 8),
      '-p',
      'and now?',
      '--base-url',
      harness.server.baseURL,
    );
    expect(resumed.stdout).toBe('Still apples.\n');
    expect(messagesOf(harness.server.turnRequests().at(-1)!).map(contentText)).toContain('about apples');
  }, 90_000);

  test('resume of an unknown id fails with a clear message', async () => {
    const result = await cli('resume', 'deadbeef', '-p', 'hi', '--base-url', harness.server.baseURL);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("youyou: no session has the id 'deadbeef'; 'youyou sessions' lists them\n");
  });

  test('--continue without any session says so', async () => {
    const result = await cli('--continue', '-p', 'hi', '--base-url', harness.server.baseURL);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('youyou: there is no session to continue yet; run youyou to start one\n');
  });
});
