import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { contentText, messagesOf, textReply, toolCallReply } from '../../../test-support/cli-wire.js';
import type { WireRequest } from '../../../test-support/wire-server.js';
import { jsonLines, runCli } from './support/cli.js';
import { send, useTmuxHarness } from './support/harness.js';

const harness = useTmuxHarness();

/** Runs git as the user would on their own repository, with the test's HOME and no system config. */
function userGit(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], {
    cwd: harness.sandbox.workspace,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: harness.sandbox.root, GIT_CONFIG_NOSYSTEM: '1' },
  }).toString('utf8');
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
      } else entries.push(`${entry} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`);
    }
  };
  walk('');
  return entries;
}

/** Every message text of a request to the model server, tool calls and results included, as one string. */
function sentText(request: WireRequest | undefined): string {
  if (request === undefined) return '';
  return messagesOf(request)
    .map((message) => `${message.role}: ${contentText(message)} ${JSON.stringify(message.tool_calls ?? [])}`)
    .join('\n');
}

const CHANGES =
  "rm doomed.txt && mv moved.txt renamed.txt && sh -c 'echo x > gen.txt' && echo model >> notes.txt";

/** A git repository of three files, a turn without tools, then a turn whose shell call changes them. */
async function chatThatChangedFiles() {
  const workspace = harness.sandbox.workspace;
  writeFileSync(path.join(workspace, 'doomed.txt'), 'doomed\n');
  writeFileSync(path.join(workspace, 'moved.txt'), 'moved\n');
  writeFileSync(path.join(workspace, 'notes.txt'), 'notes\n');
  userGit('init', '-q');
  userGit('add', '-A');
  userGit('commit', '-q', '-m', 'start');
  const head = userGit('rev-parse', 'HEAD');
  userGit('status', '--porcelain');
  const gitDigest = treeDigest(path.join(workspace, '.git'));
  const original = workspaceFiles();
  harness.server.reply(
    textReply('One.'),
    toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command: CHANGES } }),
    textReply('Changed.'),
  );
  const chat = await harness.startChat('--yes');
  await send(chat, 'first message');
  await chat.waitFor(/One\.\n› *\n*$/);
  await send(chat, 'change things');
  await chat.waitFor(/Changed\.\n› *\n*$/);
  return { chat, head, gitDigest, original };
}

describe('/rewind', () => {
  test("both: the files come back (the user's edit kept) and the next request no longer carries the rewound turn", async () => {
    const { chat, head, gitDigest, original } = await chatThatChangedFiles();
    writeFileSync(path.join(harness.sandbox.workspace, 'notes.txt'), 'the user wrote this\n');

    await send(chat, '/rewind');
    await chat.waitFor(/1 +first message\n +2 +change things\n[\s\S]*\[1-2\]/);
    await send(chat, '2');
    await chat.waitFor(/\(b\)oth\?/);
    await send(chat, 'b');
    await chat.waitFor(/Overwrite them too\? \[y\/N\]/);
    await send(chat, 'n');
    await chat.waitFor(/Conversation rewound[^\n]*\n› *\n*$/);

    expect(workspaceFiles()).toEqual({ ...original, 'notes.txt': 'the user wrote this\n' });
    expect(treeDigest(path.join(harness.sandbox.workspace, '.git'))).toEqual(gitDigest);
    expect(userGit('rev-parse', 'HEAD')).toBe(head);
    expect(userGit('status', '--porcelain')).toBe(' M notes.txt\n');

    harness.server.reply(textReply('After.'));
    await send(chat, 'after the rewind');
    await chat.waitFor(/After\.\n› *\n*$/);
    const sent = sentText(harness.server.turnRequests().at(-1));
    expect(sent).toContain('first message');
    expect(sent).toContain('after the rewind');
    expect(sent).not.toContain('change things');
    expect(sent).not.toContain('rm doomed.txt');
  });

  test('files only: the shell rm, mv and generated file are undone and the conversation stays', async () => {
    const { chat, original } = await chatThatChangedFiles();

    await send(chat, '/rewind');
    await chat.waitFor(/\[1-2\]/);
    await send(chat, '1');
    await chat.waitFor(/\(b\)oth\?/);
    await send(chat, 'f');
    await chat.waitFor(/Restored 5 file\(s\)[\s\S]*› *\n*$/);
    expect(workspaceFiles()).toEqual(original);

    harness.server.reply(textReply('After.'));
    await send(chat, 'after the rewind');
    await chat.waitFor(/After\.\n› *\n*$/);
    expect(sentText(harness.server.turnRequests().at(-1))).toContain('change things');
  });

  test('an edit the user made between two turns is listed and kept when rewinding past both', async () => {
    const workspace = harness.sandbox.workspace;
    writeFileSync(path.join(workspace, 'notes.txt'), 'notes\n');
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'shell', arguments: { command: "sh -c 'echo x > gen.txt'" } }),
      textReply('One.'),
      toolCallReply({
        id: 'call_2',
        name: 'shell',
        arguments: { command: 'rm gen.txt && echo two > two.txt' },
      }),
      textReply('Two.'),
    );
    const chat = await harness.startChat('--yes');
    await send(chat, 'make gen');
    await chat.waitFor(/One\.\n› *\n*$/);
    writeFileSync(path.join(workspace, 'notes.txt'), 'the user, between the turns\n');
    await send(chat, 'make two');
    await chat.waitFor(/Two\.\n› *\n*$/);

    await send(chat, '/rewind');
    await chat.waitFor(/\[1-2\]/);
    await send(chat, '1');
    await chat.waitFor(/\(b\)oth\?/);
    await send(chat, 'f');
    await chat.waitFor(/1 file\(s\) were changed outside this session[\s\S]*notes\.txt[\s\S]*\[y\/N\]/);
    await send(chat, 'n');
    await chat.waitFor(/Kept 1 file\(s\) you changed\.\n› *\n*$/);
    expect(workspaceFiles()).toEqual({ 'notes.txt': 'the user, between the turns\n' });
  });
});

describe('forks', () => {
  test('/fork continues in a new session whose next request carries the old history', async () => {
    harness.server.reply(textReply('Noted.'));
    const chat = await harness.startChat();
    await send(chat, 'remember the pears');
    await chat.waitFor(/Noted\.\n› *\n*$/);

    await send(chat, '/fork');
    const screen = await chat.waitFor(/Forked: this is session (\S+); (\S+) stays as it was\.\n› *\n*$/);
    const [, forkId, sourceId] = /Forked: this is session (\S+); (\S+) stays/.exec(screen) ?? [];
    expect(forkId).toMatch(/^[0-9a-f-]{36}$/);
    expect(forkId).not.toBe(sourceId);

    harness.server.reply(textReply('Pears.'));
    await send(chat, 'what did I say?');
    await chat.waitFor(/Pears\.\n› *\n*$/);
    const sent = sentText(harness.server.turnRequests().at(-1));
    expect(sent).toContain('remember the pears');
    expect(sent).toContain('what did I say?');
  });

  test('resume ID --fork starts a new session with the old history; the old session is left as it was', async () => {
    harness.server.reply(textReply('Noted.'));
    const first = await runCli({
      args: ['-p', 'remember the pears', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(first.code).toBe(0);
    const listed = async () =>
      jsonLines((await runCli({ args: ['sessions', '--json'], sandbox: harness.sandbox })).stdout) as {
        sessionId: string;
        messageCount: number;
      }[];
    const [source] = await listed();
    if (source === undefined) throw new Error('no session was saved');

    harness.server.reply(textReply('Pears.'));
    const chat = await harness.startChat('resume', source.sessionId.slice(0, 8), '--fork');
    const screen = await chat.waitFor(/Forked: this is session (\S+); (\S+) stays as it was\./);
    const [, forkId, sourceId] = /Forked: this is session (\S+); (\S+) stays/.exec(screen) ?? [];
    expect(sourceId).toBe(source.sessionId);
    expect(forkId).toMatch(/^[0-9a-f-]{36}$/);
    expect(forkId).not.toBe(source.sessionId);
    await send(chat, 'what did I say?');
    await chat.waitFor(/Pears\.\n› *\n*$/);
    const sent = sentText(harness.server.turnRequests().at(-1));
    expect(sent).toContain('remember the pears');
    expect(sent).toContain('what did I say?');
    await send(chat, '/exit');
    await chat.waitForExit();

    const after = await listed();
    expect(after.map((entry) => entry.sessionId).sort()).toEqual([source.sessionId, forkId].sort());
    expect(after.find((entry) => entry.sessionId === source.sessionId)?.messageCount).toBe(
      source.messageCount,
    );
  });
});
