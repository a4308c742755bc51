import { execFile } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { buildStale, CLI_PACKAGES } from '../../../scripts/build-stale.mjs';
import { contentText, hangingReply, messagesOf, textReply } from '../../../test-support/cli-wire.js';
import { REPOSITORY } from './support/build.js';
import { childEnv, jsonLines, runCli, startCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';
import { until } from './support/until.js';

const harness = useCliHarness();

const run = promisify(execFile);
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

function cli(...args: string[]) {
  return runCli({ args, sandbox: harness.sandbox });
}

async function writeConfig(config: unknown): Promise<void> {
  await mkdir(harness.sandbox.home, { recursive: true });
  await writeFile(path.join(harness.sandbox.home, 'config.json'), JSON.stringify(config));
}

/** Runs one -p turn answered with `answer` (extra args first); resolves with the session id. */
async function turn(prompt: string, answer: string, ...args: string[]): Promise<string> {
  harness.server.reply(textReply(answer));
  const result = await cli(...args, '-p', prompt, '--json', '--base-url', harness.server.baseURL);
  expect(result.code).toBe(0);
  return (jsonLines(result.stdout)[0] as { sessionId: string }).sessionId;
}

describe('two processes on one session', () => {
  test('the second is refused in one line with exit 1 and sends nothing; once the first ends it may go on', async () => {
    const id = await turn('remember 42', 'Remembered.');
    harness.server.reply(hangingReply('thinking about '));
    const first = startCli({
      args: ['resume', id, '-p', 'and now?', '--json', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    // The first process is inside its turn: the server is streaming its answer.
    await until(() => harness.server.turnRequests().length === 2 && first.stdout().includes('text_delta'));

    for (const args of [
      ['resume', id.slice(0, 8), '-p', 'me too'],
      ['--continue', '-p', 'me too'],
    ]) {
      const second = await cli(...args, '--base-url', harness.server.baseURL);
      expect(second.code).toBe(1);
      expect(second.stdout).toBe('');
      expect(second.stderr.endsWith('\n')).toBe(true);
      expect(second.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(second.stderr).toContain(id);
    }
    expect(harness.server.turnRequests()).toHaveLength(2);

    first.child.kill('SIGINT');
    expect((await first.result).code).toBe(130);
    harness.server.reply(textReply('Now it is mine.'));
    const after = await cli('resume', id, '-p', 'mine now?', '--base-url', harness.server.baseURL);
    expect(after.code).toBe(0);
    expect(after.stdout).toBe('Now it is mine.\n');
  }, 60_000);

  test('a session whose holder was killed is free at once', async () => {
    const id = await turn('hello', 'Hi.');
    harness.server.reply(hangingReply('streaming '));
    const holder = startCli({
      args: ['resume', id, '-p', 'go on', '--json', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    await until(() => holder.stdout().includes('text_delta'));
    holder.child.kill('SIGKILL');
    await holder.result;

    harness.server.reply(textReply('Back.'));
    const after = await cli('resume', id, '-p', 'again', '--base-url', harness.server.baseURL);
    expect(after.stderr).toBe('');
    expect(after.code).toBe(0);
  }, 60_000);
});

describe('sessions and workspaces', () => {
  test('--continue picks the latest session of this workspace, not the latest of all', async () => {
    const other = path.join(harness.sandbox.root, 'other');
    await mkdir(other);
    const here = await turn('about this workspace', 'Here.');
    const there = await turn('about the other one', 'There.', '--cwd', other);

    harness.server.reply(textReply('Continued here.'));
    const result = await cli('--continue', '-p', 'go on', '--base-url', harness.server.baseURL);
    expect(result.code).toBe(0);
    const sent = messagesOf(harness.server.turnRequests().at(-1)!).map(contentText);
    expect(sent).toContain('about this workspace');
    expect(sent).not.toContain('about the other one');

    const listed = jsonLines((await cli('sessions', '--json')).stdout) as {
      sessionId: string;
      workspace: string | null;
    }[];
    expect(listed.map((session) => [session.sessionId, session.workspace])).toEqual([
      [here, harness.sandbox.workspace],
      [there, other],
    ]);
    const table = (await cli('sessions')).stdout.split('\n');
    expect(table[0]).toContain('WORKSPACE');
    expect(table.find((line) => line.includes(here.slice(0, 8)))).toContain(harness.sandbox.workspace);
    expect(table.find((line) => line.includes(there.slice(0, 8)))).toContain(other);
  }, 60_000);

  test('a session saved with the old spelling of the workspace key keeps its workspace', async () => {
    const other = path.join(harness.sandbox.root, 'other');
    await mkdir(other);
    const old = await turn('saved by an older youyou', 'Old.');
    await turn('about the other one', 'There.', '--cwd', other);
    // What an older youyou wrote: the same metadata event under the key 'youyou.workspace'.
    const database = new Database(path.join(harness.sandbox.home, 'youyou.db'));
    const renamed = database
      .prepare(
        "UPDATE events SET payload = json_set(payload, '$.key', 'youyou.workspace') WHERE json_extract(payload, '$.key') = 'youyou_cli_workspace' AND json_extract(payload, '$.value') = ?",
      )
      .run(harness.sandbox.workspace);
    database.close();
    expect(renamed.changes).toBe(1);

    const listed = jsonLines((await cli('sessions', '--json')).stdout) as {
      sessionId: string;
      workspace: string | null;
    }[];
    expect(listed.find((session) => session.sessionId === old)?.workspace).toBe(harness.sandbox.workspace);
    harness.server.reply(textReply('Continued.'));
    const result = await cli('--continue', '-p', 'go on', '--base-url', harness.server.baseURL);
    expect(result.code).toBe(0);
    const sent = messagesOf(harness.server.turnRequests().at(-1)!).map(contentText);
    expect(sent).toContain('saved by an older youyou');
    expect(sent).not.toContain('about the other one');
  }, 60_000);

  test('--continue in a workspace without sessions fails and does not open another workspace’s', async () => {
    await turn('elsewhere', 'Elsewhere.', '--cwd', harness.sandbox.root);
    const result = await cli('--continue', '-p', 'hi', '--base-url', harness.server.baseURL);
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(harness.server.turnRequests()).toHaveLength(1);
  }, 60_000);
});

describe('a failed turn', () => {
  test('is reported once: closing sends no memory request after it and prints nothing more', async () => {
    harness.server.reply({
      type: 'json',
      status: 400,
      body: { error: { message: 'model xyzzy does not exist' } },
    });

    const result = await cli('-p', 'hello', '--base-url', harness.server.baseURL);

    expect(result.code).toBe(1);
    expect(harness.server.wire.requests).toHaveLength(1);
    expect(result.stderr.split('xyzzy')).toHaveLength(2);
  }, 60_000);

  test('a later successful turn lifts it: closing extracts memories again', async () => {
    const id = await turn('first', 'Fine.');
    expect(harness.server.memoryRequests()).toHaveLength(1);
    harness.server.reply({ type: 'json', status: 400, body: { error: { message: 'broken' } } });
    await cli('resume', id, '-p', 'second', '--base-url', harness.server.baseURL);
    expect(harness.server.memoryRequests()).toHaveLength(1);
    await turn('third', 'Fine again.', 'resume', id);
    expect(harness.server.memoryRequests().length).toBeGreaterThan(1);
  }, 60_000);
});

describe('MCP servers', () => {
  test('a hung server shows "connecting…", gives up after the timeoutMs of config.json, and the turn runs', async () => {
    await writeConfig({
      mcpServers: {
        slow: {
          command: process.execPath,
          args: [path.join(FIXTURES, 'hung-mcp-server.mjs')],
          timeoutMs: 1500,
        },
      },
    });
    harness.server.reply(textReply('answered'));

    const result = await cli('-p', 'hi', '--base-url', harness.server.baseURL);

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('answered\n');
    expect(result.stderr).toMatch(/connecting to MCP server slow…/);
    // It gave up at the configured 1.5 s: the SDK's default (60 s) would have outlasted the test's timeout.
    expect(result.stderr).toMatch(/warning: .*slow.*1500/);
  }, 60_000);

  test('a timeoutMs that is not a positive whole number is a configuration error', async () => {
    await writeConfig({ mcpServers: { bad: { command: 'true', timeoutMs: -5 } } });
    const result = await cli('-p', 'hi', '--base-url', harness.server.baseURL);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('mcpServers.bad.timeoutMs');
  }, 60_000);
});

describe('project instructions and skills', () => {
  test('AGENTS.md and .youyou/instructions.md of the workspace go into the system prompt', async () => {
    await writeFile(
      path.join(harness.sandbox.workspace, 'AGENTS.md'),
      '# Rules\nAlways run npm test before committing.\n',
    );
    await mkdir(path.join(harness.sandbox.workspace, '.youyou'));
    await writeFile(
      path.join(harness.sandbox.workspace, '.youyou', 'instructions.md'),
      'Indent with tabs.\n',
    );
    harness.server.reply(textReply('ok'));

    expect((await cli('-p', 'hi', '--base-url', harness.server.baseURL)).code).toBe(0);

    const system = messagesOf(harness.server.turnRequests()[0]!)
      .filter((message) => message.role === 'system' || message.role === 'developer')
      .map(contentText)
      .join('\n');
    expect(system).toContain('Always run npm test before committing.');
    expect(system).toContain('Indent with tabs.');
    expect(system.indexOf('npm test')).toBeLessThan(system.indexOf('Indent with tabs.'));
  }, 60_000);

  test('a skill in .agents/skills is found and used', async () => {
    const folder = path.join(harness.sandbox.workspace, '.agents', 'skills', 'limerick');
    await mkdir(folder, { recursive: true });
    await writeFile(
      path.join(folder, 'SKILL.md'),
      '---\nname: limerick\ndescription: Answer in a limerick.\n---\nAnswer in exactly one limerick.\n',
    );
    harness.server.reply(textReply('There once was a frog'));

    const result = await cli('-p', '/limerick about frogs', '--base-url', harness.server.baseURL);

    expect(result.code).toBe(0);
    const sent = messagesOf(harness.server.turnRequests()[0]!).map(contentText).join('\n');
    expect(sent).toContain('Answer in exactly one limerick.');
  }, 60_000);
});

describe('startup', () => {
  /** The modules a run of the binary loaded, recorded by a resolve hook given through NODE_OPTIONS. */
  async function modulesLoadedBy(...args: string[]): Promise<string[]> {
    const record = path.join(harness.sandbox.root, 'imports.txt');
    await writeFile(record, '');
    await runCli({
      args,
      sandbox: harness.sandbox,
      env: {
        NODE_OPTIONS: `--import ${path.join(FIXTURES, 'record-imports.mjs')}`,
        YOUYOU_TEST_IMPORTS: record,
      },
    });
    return (await readFile(record, 'utf8')).split('\n').filter((line) => line !== '');
  }

  const HEAVY = [
    '/packages/openai/',
    '/packages/anthropic/',
    '/packages/sqlite/',
    '/packages/postgres/',
    '/packages/mcp/',
    '/node_modules/openai/',
    '/node_modules/@anthropic-ai/',
    '/node_modules/better-sqlite3/',
    '/node_modules/pg/',
    '/node_modules/@modelcontextprotocol/',
    '/packages/otel/',
    '/node_modules/@opentelemetry/',
    '/packages/server/',
    '/node_modules/hono/',
    '/node_modules/@hono/',
  ];

  test('--help and --version load no SDK, no MCP and no SQLite', async () => {
    for (const flag of ['--help', '--version']) {
      const loaded = await modulesLoadedBy(flag);
      expect(loaded.some((url) => url.endsWith('/packages/cli/dist/main.js'))).toBe(true);
      expect(loaded.filter((url) => HEAVY.some((part) => url.includes(part)))).toEqual([]);
    }
    // The same hook sees them when a turn needs them.
    harness.server.reply(textReply('ok'));
    const turnModules = await modulesLoadedBy('-p', 'hi', '--base-url', harness.server.baseURL);
    expect(turnModules.some((url) => url.includes('/packages/sqlite/'))).toBe(true);
    expect(turnModules.some((url) => url.includes('/packages/openai/'))).toBe(true);
  }, 60_000);

  test('npm run youyou builds nothing when nothing changed, then runs the binary', async () => {
    expect(await buildStale()).toEqual([]);
    const stamps = async () =>
      Promise.all(
        CLI_PACKAGES.map(
          async (name) =>
            (await stat(path.join(REPOSITORY, 'packages', name, 'dist', '.build-stamp'))).mtimeMs,
        ),
      );
    const before = await stamps();
    // npm needs its own variables (PATH, HOME); the child's HOME is the sandbox's, so no user config is read.
    const result = await run('npm', ['run', '--silent', 'youyou', '--', '--version'], {
      cwd: REPOSITORY,
      env: childEnv(harness.sandbox),
    });
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(await stamps()).toEqual(before);
  }, 60_000);
});
