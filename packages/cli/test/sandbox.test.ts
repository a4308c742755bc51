import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  type ChatServer,
  contentText,
  messagesOf,
  startChatServer,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import { BIN, ensureBuilt } from './support/build.js';
import { childEnv, createSandbox, runCli, type Sandbox, startCli } from './support/cli.js';
import { requireTmux, startTmux, type TmuxSession } from './support/tmux.js';

let server: ChatServer;
let sandbox: Sandbox;
let tmux: TmuxSession | undefined;

beforeAll(ensureBuilt, 180_000);

beforeEach(async () => {
  server = await startChatServer();
  sandbox = await createSandbox();
});

afterEach(async () => {
  await tmux?.kill();
  tmux = undefined;
  await server.close();
  await sandbox.remove();
});

/** Runs one `-p` turn in which the model asks `shell` to run `command`; gives the result the model got back. */
async function runShell(options: { command: string; args?: string[]; env?: Record<string, string> }) {
  const before = server.turnRequests().length;
  server.reply(
    toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command: options.command } }),
    (request) => textReply(`saw: ${toolResult(request, 'call_sh') ?? 'nothing'}`),
  );
  const result = await runCli({
    args: ['-p', 'run it', '--yes', '--base-url', server.baseURL, ...(options.args ?? [])],
    sandbox,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const sent = server.turnRequests()[before + 1];
  return { result, output: sent === undefined ? undefined : toolResult(sent, 'call_sh') };
}

async function writeConfig(config: unknown): Promise<void> {
  await mkdir(sandbox.home, { recursive: true });
  await writeFile(path.join(sandbox.home, 'config.json'), JSON.stringify(config));
}

/** Live processes (pids of this machine) whose whole command line is `commandLine`. */
function processesRunning(commandLine: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const line = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
      if (line === commandLine && state !== 'Z') pids.push(Number(entry));
    } catch {
      // The process ended while it was read.
    }
  }
  return pids;
}

function uniqueSleep(): string {
  return `sleep 100.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

/** Every byte of the session database, its WAL and shared memory included. */
async function databaseBytes(): Promise<string> {
  const files = readdirSync(sandbox.home).filter((name) => name.startsWith('youyou.db'));
  expect(files).toContain('youyou.db');
  const parts = await Promise.all(files.map((name) => readFile(path.join(sandbox.home, name))));
  return Buffer.concat(parts).toString('latin1');
}

describe('the shell sandbox', () => {
  test('API keys and tokens of the environment reach neither the command, the model nor the database', async () => {
    const anthropicKey = 'sk-ant-test-9f8e7d6c5b4a3210';
    const fooToken = 'foo-token-5a4b3c2d1e0f';
    const { result, output } = await runShell({
      // The environment, and that of every process the command can see in /proc (youyou's own among them
      // if the sandbox shared its PID namespace).
      command:
        'echo "A=[$ANTHROPIC_API_KEY] F=[$FOO_TOKEN] P=[$PATH]"; env; ' +
        "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null; echo PROC-READ",
      env: { ANTHROPIC_API_KEY: anthropicKey, FOO_TOKEN: fooToken, OPENAI_BASE_URL: 'http://leak.invalid' },
    });
    expect(result.code).toBe(0);
    // The command ran, with PATH but without the secrets.
    expect(output).toMatch(/A=\[\] F=\[\] P=\[\/.+\]/);
    expect(output).toContain('PROC-READ');
    for (const request of server.wire.requests) {
      expect(request.rawBody).not.toContain(anthropicKey);
      expect(request.rawBody).not.toContain(fooToken);
      expect(request.rawBody).not.toContain('leak.invalid');
    }
    const stored = await databaseBytes();
    expect(stored).toContain('A=[] F=[]');
    expect(stored).not.toContain(anthropicKey);
    expect(stored).not.toContain(fooToken);
  });

  test('stdio MCP servers get the allowlist, passEnv and their own env, never the secrets of the environment', async () => {
    const dump = path.join(sandbox.root, 'mcp-env.json');
    await writeConfig({
      passEnv: ['MY_SETTING', 'MY_API_KEY'],
      mcpServers: {
        dumper: {
          command: process.execPath,
          args: ['-e', `require('fs').writeFileSync(${JSON.stringify(dump)}, JSON.stringify(process.env))`],
          env: { DUMPER_TOKEN: 'written-for-this-server' },
        },
      },
    });
    const { output } = await runShell({
      command: 'echo "S=[$MY_SETTING] K=[$MY_API_KEY] T=[$OPENAI_API_KEY]"',
      env: {
        MY_SETTING: 'plain-value',
        MY_API_KEY: 'my-key-3141592653',
        OPENAI_API_KEY: 'sk-openai-2718281828',
        LANG: 'C.UTF-8',
      },
    });
    expect(output).toContain('S=[plain-value] K=[] T=[]');
    const received = JSON.parse(await readFile(dump, 'utf8')) as Record<string, string>;
    expect(received.MY_SETTING).toBe('plain-value');
    expect(received.LANG).toBe('C.UTF-8');
    expect(received.DUMPER_TOKEN).toBe('written-for-this-server');
    expect(received.PATH).toBeDefined();
    expect(received.MY_API_KEY).toBeUndefined();
    expect(received.OPENAI_API_KEY).toBeUndefined();
    expect(received.YOUYOU_HOME).toBeUndefined();
  });

  test('runs bash when there is one, and the system prompt names the shell that runs', async () => {
    const { output } = await runShell({ command: 'echo "bash=[$BASH_VERSION] shell=[$SHELL]"' });
    // The environment is in the dynamic prompt part: a system message of its own, before the user's.
    const system = messagesOf(server.turnRequests()[0]!)
      .filter((message) => message.role === 'system')
      .map(contentText)
      .join('\n');
    const named = /shell: (\S+)/.exec(system)?.[1];
    expect(named).toBeDefined();
    const bash = ['/usr/bin/bash', '/bin/bash'].find((candidate) => existsSync(candidate));
    if (bash === undefined) {
      expect(named).toBe('/bin/sh');
    } else {
      // The child's SHELL is /bin/sh (see childEnv): the prompt names what really runs, not $SHELL.
      expect(path.basename(named!)).toBe('bash');
      expect(output).toMatch(/bash=\[\d+\.\d+[^\]]*\]/);
      expect(output).toContain(`shell=[${named}]`);
    }
  });

  test('a write outside the workspace fails and leaves no file; inside it succeeds', async () => {
    const outside = path.join(sandbox.root, 'outside.txt');
    const inHome = path.join(sandbox.root, '.profile-written');
    const { output } = await runShell({
      command: `echo in > inside.txt && echo "inside ok"; echo out > ${outside}; echo home > ${inHome}; exit 0`,
    });
    expect(output).toContain('inside ok');
    expect(output).toMatch(/Read-only file system/);
    expect(await readFile(path.join(sandbox.workspace, 'inside.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(inHome)).toBe(false);
  });

  test('the credential folders of the home folder and the youyou home are hidden', async () => {
    await mkdir(path.join(sandbox.root, '.ssh'));
    await writeFile(path.join(sandbox.root, '.ssh', 'id_ed25519'), 'PRIVATE-KEY-MATERIAL-77\n');
    await mkdir(path.join(sandbox.root, '.aws'));
    await writeFile(path.join(sandbox.root, '.aws', 'credentials'), 'AWS-SECRET-MATERIAL-88\n');
    await writeFile(path.join(sandbox.root, '.netrc'), 'machine x password NETRC-MATERIAL-99\n');
    await writeConfig({ systemInstructions: ['be brief'] });
    await writeFile(path.join(sandbox.home, 'notes'), 'YOUYOU-HOME-MATERIAL-66\n');
    const { output } = await runShell({
      command: `cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc ${sandbox.home}/notes; ls -a ~/.ssh; echo listed`,
    });
    expect(output).toContain('listed');
    for (const secret of ['PRIVATE-KEY', 'AWS-SECRET', 'NETRC-MATERIAL', 'YOUYOU-HOME-MATERIAL']) {
      expect(output).not.toContain(secret);
      for (const request of server.wire.requests) expect(request.rawBody).not.toContain(secret);
    }
    expect(output).not.toContain('id_ed25519\n');
    // Hidden, not deleted.
    expect(await readFile(path.join(sandbox.root, '.ssh', 'id_ed25519'), 'utf8')).toContain('PRIVATE-KEY');
  });

  describe('the network', () => {
    let listener: Server;
    let connections = 0;
    let port = 0;

    beforeEach(async () => {
      connections = 0;
      listener = createServer((socket) => {
        connections += 1;
        socket.end('hello from the host\n');
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      port = (listener.address() as { port: number }).port;
    });

    afterEach(() => new Promise<void>((resolve) => listener.close(() => resolve())));

    const connect = (): string =>
      `"${process.execPath}" -e "require('net').connect(${port}, '127.0.0.1')` +
      `.on('data', (d) => { process.stdout.write('GOT ' + d); process.exit(0); })` +
      `.on('error', (e) => { console.log('FAILED ' + e.code); process.exit(1); })"`;

    test('is off by default: a port listening on 127.0.0.1 cannot be reached', async () => {
      const { output } = await runShell({ command: connect() });
      expect(output).toMatch(/FAILED/);
      expect(connections).toBe(0);
    });

    test('--allow-network opens it', async () => {
      const { output } = await runShell({ command: connect(), args: ['--allow-network'] });
      expect(output).toContain('GOT hello from the host');
      expect(connections).toBe(1);
    });

    test('"sandbox": {"network": true} in config.json opens it', async () => {
      await writeConfig({ sandbox: { network: true } });
      const { output } = await runShell({ command: connect() });
      expect(output).toContain('GOT hello from the host');
      expect(connections).toBe(1);
    });
  });

  test('what a command leaves running in the background is gone after the turn', async () => {
    const sleeper = uniqueSleep();
    const { result, output } = await runShell({ command: `${sleeper} & echo started` });
    expect(result.code).toBe(0);
    expect(output).toContain('started');
    await vi.waitFor(() => expect(processesRunning(sleeper)).toEqual([]), { timeout: 5000, interval: 50 });
  });

  test('the command dies with the CLI, even when the CLI is killed with SIGKILL', async () => {
    const sleeper = uniqueSleep();
    server.reply(
      toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command: `${sleeper}; echo late` } }),
    );
    const running = startCli({ args: ['-p', 'run it', '--yes', '--base-url', server.baseURL], sandbox });
    await vi.waitFor(() => expect(processesRunning(sleeper)).toHaveLength(1), {
      timeout: 15_000,
      interval: 50,
    });
    running.child.kill('SIGKILL');
    await running.result;
    await vi.waitFor(() => expect(processesRunning(sleeper)).toEqual([]), { timeout: 5000, interval: 50 });
  });

  test('Ctrl-C in the chat ends the command and what it started', async () => {
    await requireTmux();
    const sleeper = uniqueSleep();
    server.reply(
      toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command: `${sleeper} & ${sleeper}` } }),
      textReply('stopped'),
    );
    tmux = await startTmux({
      command: [process.execPath, BIN, '--base-url', server.baseURL, '--yes'],
      cwd: sandbox.workspace,
      env: childEnv(sandbox),
    });
    await tmux.waitFor(/\n› *\n*$/);
    await tmux.type('sleep please');
    await tmux.keys('Enter');
    await vi.waitFor(() => expect(processesRunning(sleeper)).toHaveLength(2), {
      timeout: 15_000,
      interval: 50,
    });
    await tmux.keys('C-c');
    await vi.waitFor(() => expect(processesRunning(sleeper)).toEqual([]), { timeout: 5000, interval: 50 });
  });

  test('read-only mode refuses a write in the workspace', async () => {
    const { output } = await runShell({ command: 'echo x > blocked.txt', args: ['--sandbox', 'read-only'] });
    expect(output).toMatch(/Read-only file system/);
    expect(output).toMatch(/\[exit code [1-9]/);
    expect(existsSync(path.join(sandbox.workspace, 'blocked.txt'))).toBe(false);
  });

  test('without bubblewrap the CLI refuses to start, in one line, and asks the model nothing', async () => {
    await writeConfig({ sandbox: { bwrapPath: path.join(sandbox.root, 'no-such-bwrap') } });
    const result = await runCli({ args: ['-p', 'hello', '--base-url', server.baseURL], sandbox });
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/bubblewrap/);
    expect(server.wire.requests).toHaveLength(0);

    const noPath = await runCli({
      args: ['-p', 'hello', '--base-url', server.baseURL],
      sandbox,
      env: { PATH: path.join(sandbox.root, 'empty-bin') },
    });
    expect(noPath.code).toBe(2);
    expect(noPath.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(noPath.stderr).toMatch(/bwrap is not installed/);
    expect(server.wire.requests).toHaveLength(0);
  });

  test('a bubblewrap that cannot create its sandbox (no user namespaces) is the same one-line refusal', async () => {
    const fake = path.join(sandbox.root, 'bwrap-without-userns');
    await writeFile(fake, '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n', {
      mode: 0o755,
    });
    await writeConfig({ sandbox: { bwrapPath: fake } });
    const result = await runCli({ args: ['-p', 'hello', '--base-url', server.baseURL], sandbox });
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('uid map');
    expect(server.wire.requests).toHaveLength(0);
  });

  test('without bubblewrap the shell runs unconfined only when the user chose it', async () => {
    await writeConfig({
      sandbox: { bwrapPath: path.join(sandbox.root, 'no-such-bwrap'), allowUnconfined: true },
    });
    const outside = path.join(sandbox.root, 'unconfined.txt');
    const { result } = await runShell({ command: `echo free > ${outside}` });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/unconfined/);
    expect(await readFile(outside, 'utf8')).toBe('free\n');

    const flagged = path.join(sandbox.root, 'flagged.txt');
    await writeConfig({ sandbox: { bwrapPath: path.join(sandbox.root, 'no-such-bwrap') } });
    const chosen = await runShell({
      command: `echo free > ${flagged}`,
      args: ['--sandbox', 'danger-full-access'],
    });
    expect(chosen.result.stderr).toMatch(/danger-full-access/);
    expect(await readFile(flagged, 'utf8')).toBe('free\n');
  });

  test('danger-full-access shows in the banner', async () => {
    await requireTmux();
    tmux = await startTmux({
      command: [process.execPath, BIN, '--base-url', server.baseURL, '--sandbox', 'danger-full-access'],
      cwd: sandbox.workspace,
      env: childEnv(sandbox),
    });
    const screen = await tmux.waitFor(/\n› *\n*$/);
    expect(screen).toMatch(/danger-full-access/);
  });
});
