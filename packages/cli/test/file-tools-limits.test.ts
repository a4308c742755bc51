import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  contentText,
  messagesOf,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import { runCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

/** What the file tools may and may not do beyond the workspace's edge: rules, hidden paths, read-only. */
const harness = useCliHarness();

/** Queues one reply per call, in order, then `done`; returns the call ids. */
function scriptCalls(calls: { name: string; arguments: unknown }[]): string[] {
  const ids = calls.map((_, index) => `call_${index}`);
  harness.server.reply(
    ...calls.map((call, index) => toolCallReply({ id: ids[index]!, ...call })),
    textReply('done'),
  );
  return ids;
}

/** The result of each call, read from the last request the model server received. */
function resultsOf(ids: string[]): string[] {
  const last = harness.server.turnRequests().at(-1)!;
  return ids.map((id) => toolResult(last, id) ?? `(no result for ${id})`);
}

describe('allow rules match the path the tool really touches', () => {
  test('write_file(src/**) lets src/ok.txt run unasked but not src/up/.git/config through src/up -> ..', async () => {
    const { workspace, home } = harness.sandbox;
    await mkdir(path.join(workspace, '.git'));
    await writeFile(path.join(workspace, '.git', 'config'), '[core]\n');
    await mkdir(path.join(workspace, 'src'));
    await symlink('..', path.join(workspace, 'src', 'up'));
    await symlink('../.git/config', path.join(workspace, 'src', 'config-link'));
    await mkdir(home, { recursive: true });
    await writeFile(
      path.join(home, 'config.json'),
      JSON.stringify({ approval: { allow: ['write_file(src/**)'] } }),
    );
    const ids = scriptCalls([
      { name: 'write_file', arguments: { path: 'src/ok.txt', content: 'fine' } },
      {
        name: 'write_file',
        arguments: { path: 'src/up/.git/config', content: '[core]\nfsmonitor = evil\n' },
      },
      { name: 'write_file', arguments: { path: 'src/config-link', content: '[core]\nfsmonitor = evil\n' } },
    ]);

    // No --yes: a call no allow rule matches is refused, since nobody can be asked.
    const result = await runCli({
      args: ['-p', 'write', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });

    expect(result.code).toBe(0);
    expect(await readFile(path.join(workspace, 'src', 'ok.txt'), 'utf8')).toBe('fine');
    expect(await readFile(path.join(workspace, '.git', 'config'), 'utf8')).toBe('[core]\n');
    const [ok, throughLink, fileLink] = resultsOf(ids);
    expect(ok).toMatch(/^Created src\/ok\.txt/);
    expect(throughLink).toContain('--yes');
    expect(fileLink).toContain('--yes');
  });
});

describe('the file tools honour the hidden paths of the sandbox', () => {
  test('with $HOME as the workspace, ~/.ssh, ~/.aws and ~/.youyou/config.json are neither read, searched nor listed', async () => {
    // The workspace is the home folder, and youyou's own home lies in it, as with `cd ~ && youyou`.
    const home = harness.sandbox.workspace;
    const youyouHome = path.join(home, '.youyou');
    const token = 'server-token-MARKER-5d41402abc4b2a76';
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.ssh', 'id_ed25519'), 'ssh-key-MARKER-0001\n');
    await mkdir(path.join(home, '.aws'));
    await writeFile(path.join(home, '.aws', 'credentials'), 'aws-secret-MARKER-0002\n');
    await mkdir(youyouHome);
    await writeFile(
      path.join(youyouHome, 'config.json'),
      JSON.stringify({ server: { tokens: { [token]: 'alice' } } }),
    );
    await writeFile(path.join(home, 'notes.txt'), 'plain-MARKER-0003\n');
    await symlink('.ssh/id_ed25519', path.join(home, 'key-link'));
    const ids = scriptCalls([
      { name: 'read_file', arguments: { path: '.ssh/id_ed25519' } },
      { name: 'read_file', arguments: { path: '.aws/credentials' } },
      { name: 'read_file', arguments: { path: '.youyou/config.json' } },
      { name: 'read_file', arguments: { path: 'key-link' } },
      { name: 'grep', arguments: { pattern: 'MARKER' } },
      { name: 'grep', arguments: { pattern: 'MARKER', path: '.ssh' } },
      { name: 'list_dir', arguments: { path: '.ssh' } },
      { name: 'list_dir', arguments: {} },
      { name: 'glob', arguments: { pattern: '**/*' } },
      { name: 'glob', arguments: { pattern: '*', path: '.aws' } },
    ]);

    const result = await runCli({
      args: ['-p', 'look around', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
      env: { HOME: home, YOUYOU_HOME: youyouHome },
    });

    expect(result.code, result.stderr).toBe(0);
    // No tool result of any request carried a secret.
    const answers = harness.server
      .turnRequests()
      .flatMap((request) => messagesOf(request).filter((message) => message.role === 'tool'))
      .map(contentText)
      .join('\n');
    for (const secret of ['ssh-key-MARKER', 'aws-secret-MARKER', token])
      expect(answers).not.toContain(secret);
    const results = resultsOf(ids);
    for (const index of [0, 1, 2, 3, 5, 6, 9])
      expect(results[index], ids[index]).toContain('hidden from the tools');
    // The search ran and found what is not hidden.
    expect(results[4]).toBe('notes.txt:1: plain-MARKER-0003');
    expect(results[7]).toContain('.ssh  (hidden from the tools)');
    expect(results[8]).toContain('notes.txt');
    // Nothing inside a hidden folder was named by a listing.
    for (const listing of [results[7], results[8]])
      expect(listing).not.toMatch(/id_ed25519|credentials|config\.json/);
  });
});

describe('--sandbox read-only holds for every tool', () => {
  test('write_file and edit_file refuse, even with --yes; nothing on disk changes', async () => {
    const { workspace } = harness.sandbox;
    await writeFile(path.join(workspace, 'existing.txt'), 'before\n');
    const ids = scriptCalls([
      { name: 'write_file', arguments: { path: 'new.txt', content: 'created' } },
      { name: 'write_file', arguments: { path: 'existing.txt', content: 'replaced' } },
      { name: 'edit_file', arguments: { path: 'existing.txt', oldString: 'before', newString: 'after' } },
      { name: 'read_file', arguments: { path: 'existing.txt' } },
    ]);

    const result = await runCli({
      args: ['-p', 'change things', '--yes', '--sandbox', 'read-only', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });

    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(path.join(workspace, 'new.txt'))).toBe(false);
    expect(await readFile(path.join(workspace, 'existing.txt'), 'utf8')).toBe('before\n');
    const [created, replaced, edited, read] = resultsOf(ids);
    for (const refused of [created, replaced, edited]) expect(refused).toContain('--sandbox read-only');
    expect(read).toBe('    1| before');
  });
});
