import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openSqliteStorage } from '@youyou/sqlite';
import { describe, expect, test } from 'vitest';
import {
  contentText,
  messagesOf,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import { SLASH_COMMANDS } from '../src/modes/interactive/help.js';
import { runCli } from './support/cli.js';
import { send, useTmuxHarness } from './support/harness.js';

const harness = useTmuxHarness();
const { startChat } = harness;

function databasePath(): string {
  return path.join(harness.sandbox.home, 'youyou.db');
}

describe('the prompt commands', () => {
  test('/init writes AGENTS.md from a turn that may only look (even with --yes); a second /init asks before replacing it', async () => {
    const agentsFile = path.join(harness.sandbox.workspace, 'AGENTS.md');
    harness.server.reply(
      toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'sneaky.txt', content: 'x' } }),
      textReply('```markdown\n# This project\n\nRun `npm test` before committing.\n```'),
    );
    const chat = await startChat('--yes');

    await send(chat, '/init');
    await chat.waitFor(/Wrote AGENTS\.md \(3 lines\)\.\n› *\n*$/);
    expect(await readFile(agentsFile, 'utf8')).toBe('# This project\n\nRun `npm test` before committing.\n');
    expect(existsSync(path.join(harness.sandbox.workspace, 'sneaky.txt'))).toBe(false);
    const [first, second] = harness.server.turnRequests();
    expect(contentText(messagesOf(first!).at(-1)!)).toContain('AGENTS.md');
    expect(toolResult(second!, 'call_w')).toContain('/init only inspects the workspace');

    await send(chat, '/init');
    await chat.waitFor('AGENTS.md exists. Replace it? [y/N]');
    await send(chat, 'n');
    await chat.waitFor(/AGENTS\.md is left as it is\.\n› *\n*$/);
    expect(harness.server.turnRequests()).toHaveLength(2);
    expect(await readFile(agentsFile, 'utf8')).toContain('# This project');
  });

  test('/memory lists the memories of the default namespace, numbered, and /memory delete N deletes one from storage', async () => {
    await mkdir(harness.sandbox.home, { recursive: true, mode: 0o700 });
    const storage = await openSqliteStorage(databasePath());
    try {
      await storage.memories.save({
        id: 'm-old',
        namespace: 'default',
        content: 'The user prefers tabs.',
        createdAt: new Date('2026-01-01T00:00:00Z'),
        updatedAt: new Date('2026-01-01T00:00:00Z'),
      });
      await storage.memories.save({
        id: 'm-new',
        namespace: 'default',
        content: 'The project uses pnpm.',
        createdAt: new Date('2026-02-01T00:00:00Z'),
        updatedAt: new Date('2026-02-01T00:00:00Z'),
      });
    } finally {
      await storage.close();
    }
    const chat = await startChat();

    await send(chat, '/memory');
    await chat.waitFor(/1 +The project uses pnpm\.\n +2 +The user prefers tabs\.\n.*delete N[^\n]*\n› *\n*$/);
    await send(chat, '/memory delete 1');
    await chat.waitFor(/Deleted: The project uses pnpm\.\n› *\n*$/);
    await chat.keys('C-d');
    await chat.waitForExit();

    const after = await openSqliteStorage(databasePath());
    try {
      const left = await after.memories.search('default', '', 10);
      expect(left.map((memory) => memory.id)).toEqual(['m-old']);
    } finally {
      await after.close();
    }
  });

  test('/permissions shows the sandbox, the rules of the config file and those chosen with "always"', async () => {
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(
      path.join(harness.sandbox.home, 'config.json'),
      JSON.stringify({ approval: { deny: ['shell(rm -rf)'], allow: ['shell(git status)'] } }),
    );
    harness.server.reply(
      toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }),
      textReply('Written.'),
    );
    const chat = await startChat('--sandbox', 'read-only');
    await send(chat, 'write a');
    await chat.waitFor(/Allow write_file a\.txt[\s\S]*y = yes/);
    await chat.type('a');
    await chat.waitFor('1 (or Enter) = every write_file call');
    await chat.keys('Enter');
    await chat.waitFor(/Written\.\n.*\n?› *\n*$/);

    await send(chat, '/permissions');
    const screen = await chat.waitFor(/allowed "always"[\s\S]*\n› *\n*$/);
    expect(screen).toMatch(/sandbox +read-only/);
    expect(screen).toMatch(/deny rules[^\n]*\n +shell\(rm -rf\)/);
    expect(screen).toMatch(/allow rules[^\n]*\n +shell\(git status\)/);
    expect(screen).toMatch(/allowed "always" in this run\n +write_file\n/);
  });

  test('--help lists every slash command', async () => {
    const result = await runCli({ args: ['--help'], sandbox: harness.sandbox });
    expect(result.code).toBe(0);
    for (const [usage] of SLASH_COMMANDS) expect(result.stdout).toContain(`  ${usage} `);
    for (const name of ['/init', '/memory', '/permissions']) expect(result.stdout).toContain(name);
  });
});
