import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { textReply, toolCallReply } from '../../../test-support/cli-wire.js';
import { jsonLines, runCli } from './support/cli.js';
import { PROMPT_BACK, send, useTmuxHarness } from './support/harness.js';

const harness = useTmuxHarness();

/** Runs git as the user would on their own repository, with the test's HOME and no system config. */
function userGit(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], {
    cwd: harness.sandbox.workspace,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: harness.sandbox.root, GIT_CONFIG_NOSYSTEM: '1' },
  }).toString('utf8');
}

/** Every path under `folder` with a digest of its bytes (folders by name): equal means byte-identical. */
function treeDigest(folder: string): string[] {
  const entries: string[] = [];
  const walk = (relative: string): void => {
    for (const name of readdirSync(path.join(folder, relative)).sort()) {
      const entry = path.join(relative, name);
      const full = path.join(folder, entry);
      if (statSync(full).isDirectory()) {
        entries.push(`${entry}/`);
        walk(entry);
      } else {
        entries.push(`${entry} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`);
      }
    }
  };
  walk('');
  return entries;
}

/** The workspace's own files (the user's .git left out), each with its content. */
function workspaceFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(harness.sandbox.workspace).sort()) {
    if (name === '.git') continue;
    files[name] = readFileSync(path.join(harness.sandbox.workspace, name), 'utf8');
  }
  return files;
}

/** A workspace that is a real git repository with one commit of three files. */
function userRepository(): { head: string; status: string; digest: string[] } {
  const workspace = harness.sandbox.workspace;
  writeFileSync(path.join(workspace, 'doomed.txt'), 'doomed\n');
  writeFileSync(path.join(workspace, 'moved.txt'), 'moved\n');
  writeFileSync(path.join(workspace, 'notes.txt'), 'notes\n');
  userGit('init', '-q');
  userGit('add', '-A');
  userGit('commit', '-q', '-m', 'start');
  const status = userGit('status', '--porcelain');
  return { head: userGit('rev-parse', 'HEAD'), status, digest: treeDigest(path.join(workspace, '.git')) };
}

/** The shell command of the scripted turn: a delete, a move, a generated file and an edit. */
const CHANGES =
  "rm doomed.txt && mv moved.txt renamed.txt && sh -c 'echo x > gen.txt' && echo model >> notes.txt";

describe('checkpoints in the chat', () => {
  test("/undo takes back a shell rm, mv and generated file, keeps the user's edit unless told, and leaves .git alone", async () => {
    const before = userRepository();
    const original = workspaceFiles();
    harness.server.reply(
      toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command: CHANGES } }),
      textReply('Changed.'),
    );
    const chat = await harness.startChat('--yes');
    await send(chat, 'change things');
    await chat.waitFor(/Changed\.\n› *\n*$/);
    expect(existsSync(path.join(harness.sandbox.workspace, 'gen.txt'))).toBe(true);
    // The user edits a file the call changed, between the turn and the /undo.
    writeFileSync(path.join(harness.sandbox.workspace, 'notes.txt'), 'the user wrote this\n');

    await send(chat, '/undo');
    await chat.waitFor(/notes\.txt[\s\S]*Overwrite them too\? \[y\/N\]/);
    await send(chat, 'n');
    await chat.waitFor(/Kept 1 file\(s\) you changed\.\n› *\n*$/);

    expect(workspaceFiles()).toEqual({ ...original, 'notes.txt': 'the user wrote this\n' });
    expect(treeDigest(path.join(harness.sandbox.workspace, '.git'))).toEqual(before.digest);
    expect(userGit('rev-parse', 'HEAD')).toBe(before.head);
    expect(userGit('status', '--porcelain')).toBe(' M notes.txt\n');
  });

  test('/undo with the overwrite confirmed restores the edited file too; a second /undo has nothing left', async () => {
    userRepository();
    const original = workspaceFiles();
    harness.server.reply(
      toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command: CHANGES } }),
      textReply('Changed.'),
    );
    const chat = await harness.startChat('--yes');
    await send(chat, 'change things');
    await chat.waitFor(/Changed\.\n› *\n*$/);
    writeFileSync(path.join(harness.sandbox.workspace, 'notes.txt'), 'the user wrote this\n');

    await send(chat, '/undo');
    await chat.waitFor(/Overwrite them too\? \[y\/N\]/);
    await send(chat, 'y');
    await chat.waitFor(/Restored 5 file\(s\)[\s\S]*› *\n*$/);
    expect(workspaceFiles()).toEqual(original);

    await send(chat, '/undo');
    await chat.waitFor(/Nothing to undo[^\n]*\n› *\n*$/);
    expect(workspaceFiles()).toEqual(original);
  });

  test('a -p run is checkpointed too: resumed in the chat, /undo takes its shell call back', async () => {
    writeFileSync(path.join(harness.sandbox.workspace, 'doomed.txt'), 'doomed\n');
    harness.server.reply(
      toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command: 'rm doomed.txt' } }),
      textReply('Removed.'),
    );
    const run = await runCli({
      args: ['-p', 'remove it', '--yes', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(run.code).toBe(0);
    expect(existsSync(path.join(harness.sandbox.workspace, 'doomed.txt'))).toBe(false);
    const listed = jsonLines(
      (await runCli({ args: ['sessions', '--json'], sandbox: harness.sandbox })).stdout,
    ) as { sessionId: string }[];
    const id = listed[0]?.sessionId;
    if (id === undefined) throw new Error('no session was saved');

    const chat = await harness.startChat('resume', id);
    await send(chat, '/undo');
    await chat.waitFor(/Restored 1 file\(s\)[\s\S]*› *\n*$/);
    expect(readFileSync(path.join(harness.sandbox.workspace, 'doomed.txt'), 'utf8')).toBe('doomed\n');
  });

  test('/diff shows what the session changed, with control characters of the content escaped', async () => {
    writeFileSync(path.join(harness.sandbox.workspace, 'notes.txt'), 'notes\n');
    harness.server.reply(
      toolCallReply({
        id: 'call_sh',
        name: 'shell',
        arguments: { command: "printf 'x\\033]0;pwned\\007\\n' > gen.txt && echo model >> notes.txt" },
      }),
      textReply('Changed.'),
    );
    const chat = await harness.startChat('--yes');
    await send(chat, 'change things');
    await chat.waitFor(/Changed\.\n› *\n*$/);

    await send(chat, '/diff');
    const screen = await chat.waitFor(/\+model\n[\s\S]*› *\n*$/);
    expect(screen).toContain('+++ b/gen.txt');
    expect(screen).toContain('+x\\e]0;pwned\\a');
    expect(screen).toMatch(/ notes\n\+model/);
    expect(await chat.paneTitle()).not.toContain('pwned');
    expect(screen).toMatch(PROMPT_BACK);
  });
});
