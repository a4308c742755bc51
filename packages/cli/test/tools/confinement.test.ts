import { readdirSync } from 'node:fs';
import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isAgentError } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceTools, defaultShellSandbox } from '../../src/tools/index.js';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

let workspace: TestWorkspace;

beforeEach(async () => {
  workspace = await makeWorkspace();
  await writeFile(path.join(workspace.outside, 'secret.txt'), 'top secret\n');
  await writeFile(path.join(workspace.root, 'inside.txt'), 'hello\n');
});

afterEach(() => workspace.cleanup());

/** Every path-taking tool called so that its path is `given`. */
function callsWithPath(given: string): [string, unknown][] {
  return [
    ['read_file', { path: given }],
    ['list_dir', { path: given }],
    ['glob', { pattern: '**/*', path: given }],
    ['grep', { pattern: 'secret', path: given }],
    ['write_file', { path: given, content: 'x' }],
    ['edit_file', { path: given, oldString: 'top', newString: 'bottom' }],
  ];
}

async function expectRefused(given: string): Promise<void> {
  for (const [name, args] of callsWithPath(given)) {
    const output = await workspace.call(name, args);
    expect(output.isError, `${name} ${given}`).toBe(true);
    expect(output.content, name).toContain(
      `path '${given}' is outside the workspace root '${workspace.root}'`,
    );
  }
  // Nothing outside was read into a result or changed.
  expect(await readFile(path.join(workspace.outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
}

describe('workspace confinement', () => {
  it('refuses .. that escapes the root', async () => {
    await expectRefused('../outside/secret.txt');
    await expectRefused('sub/../../outside');
  });

  it('refuses an absolute path outside the root', async () => {
    await expectRefused(path.join(workspace.outside, 'secret.txt'));
    await expectRefused('/etc');
  });

  it('allows an absolute path inside the root and .. that stays inside', async () => {
    const absolute = await workspace.call('read_file', { path: path.join(workspace.root, 'inside.txt') });
    expect(absolute).toEqual({ isError: false, content: '    1| hello' });
    const roundTrip = await workspace.call('read_file', { path: `../root/inside.txt` });
    expect(roundTrip.content).toBe('    1| hello');
  });

  it('refuses a symlink to a file outside', async () => {
    await symlink(path.join(workspace.outside, 'secret.txt'), path.join(workspace.root, 'link.txt'));
    await expectRefused('link.txt');
  });

  it('refuses a symlink to a folder outside, and paths through it', async () => {
    await symlink(workspace.outside, path.join(workspace.root, 'linked'));
    await expectRefused('linked');
    await expectRefused('linked/secret.txt');
  });

  it('refuses a new file under a symlinked folder that escapes', async () => {
    await symlink(workspace.outside, path.join(workspace.root, 'linked'));
    const output = await workspace.call('write_file', { path: 'linked/deeper/new.txt', content: 'escaped' });
    expect(output.isError).toBe(true);
    expect(output.content).toContain(`path 'linked/deeper/new.txt' is outside the workspace root`);
    await expect(stat(path.join(workspace.outside, 'deeper'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses to write through a dangling symlink that points outside', async () => {
    await symlink(path.join(workspace.outside, 'planted.txt'), path.join(workspace.root, 'dangling'));
    const output = await workspace.call('write_file', { path: 'dangling', content: 'escaped' });
    expect(output.isError).toBe(true);
    expect(output.content).toContain('is outside the workspace root');
    await expect(stat(path.join(workspace.outside, 'planted.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('follows symlinks that stay inside the root', async () => {
    await mkdir(path.join(workspace.root, 'real'));
    await writeFile(path.join(workspace.root, 'real', 'file.txt'), 'via link\n');
    await symlink(path.join(workspace.root, 'real'), path.join(workspace.root, 'alias'));
    const output = await workspace.call('read_file', { path: 'alias/file.txt' });
    expect(output).toEqual({ isError: false, content: '    1| via link' });
    const written = await workspace.call('write_file', { path: 'alias/new/created.txt', content: 'ok' });
    expect(written.isError).toBe(false);
    expect(await readFile(path.join(workspace.root, 'real', 'new', 'created.txt'), 'utf8')).toBe('ok');
  });

  it('accepts a root given through a symlink and confines to its real path', async () => {
    const aliasRoot = path.join(workspace.outside, 'root-alias');
    await symlink(workspace.root, aliasRoot);
    const tools = createWorkspaceTools({ root: aliasRoot });
    const read = tools.find((tool) => tool.name === 'read_file');
    const call = (given: string) =>
      read!.execute({
        callId: 'c',
        sessionId: 's',
        turnId: 't',
        arguments: { path: given },
        signal: new AbortController().signal,
      });
    expect((await call(path.join(aliasRoot, 'inside.txt'))).content).toBe('    1| hello');
    const refused = await call('../secret.txt');
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain(`outside the workspace root '${workspace.root}'`);
  });

  it('throws INVALID_CONFIG for a root that does not exist or options out of range', () => {
    const missing = path.join(workspace.outside, 'nope');
    expect(() => createWorkspaceTools({ root: missing })).toThrow(/does not exist/);
    try {
      createWorkspaceTools({ root: workspace.root, shellTimeoutMs: 0 });
      expect.unreachable();
    } catch (error) {
      expect(isAgentError(error) && error.code).toBe('INVALID_CONFIG');
    }
  });

  it('names seven tools, four of them read-only', () => {
    const names = workspace.tools.map((tool) => `${tool.name}:${tool.isMutating}`);
    expect(names).toEqual([
      'read_file:false',
      'list_dir:false',
      'glob:false',
      'grep:false',
      'write_file:true',
      'edit_file:true',
      'shell:true',
    ]);
  });

  it('refuses hidden paths inside the root, directly and through a symlink, and leaves them out of walks', async () => {
    const tools = createWorkspaceTools({
      root: workspace.root,
      shellSandbox: { ...defaultShellSandbox(), hiddenPaths: [path.join(workspace.root, 'vault')] },
    });
    await mkdir(path.join(workspace.root, 'vault'));
    await writeFile(path.join(workspace.root, 'vault', 'key'), 'hidden needle\n');
    await symlink('vault/key', path.join(workspace.root, 'alias'));
    const call = (name: string, args: unknown) =>
      tools
        .find((tool) => tool.name === name)!
        .execute({
          callId: 'c',
          sessionId: 's',
          turnId: 't',
          arguments: args,
          signal: new AbortController().signal,
        });
    for (const [name, args] of [
      ['read_file', { path: 'vault/key' }],
      ['read_file', { path: 'alias' }],
      ['write_file', { path: 'vault/new', content: 'x' }],
      ['edit_file', { path: 'vault/key', oldString: 'hidden', newString: 'seen' }],
      ['list_dir', { path: 'vault' }],
    ] as const) {
      expect((await call(name, args)).content, name).toContain('hidden from the tools');
    }
    expect((await call('grep', { pattern: 'needle' })).content).not.toContain('hidden needle');
    expect((await call('glob', { pattern: '**/*' })).content).not.toContain('vault/');
    expect(await readFile(path.join(workspace.root, 'vault', 'key'), 'utf8')).toBe('hidden needle\n');
  });

  it('refuses every write in read-only mode', async () => {
    const tools = createWorkspaceTools({ root: workspace.root, readOnly: true });
    const run = (name: string, args: unknown) =>
      tools
        .find((tool) => tool.name === name)!
        .execute({
          callId: 'c',
          sessionId: 's',
          turnId: 't',
          arguments: args,
          signal: new AbortController().signal,
        });
    expect((await run('write_file', { path: 'inside.txt', content: 'x' })).content).toContain('read-only');
    expect(
      (await run('edit_file', { path: 'inside.txt', oldString: 'hello', newString: 'bye' })).content,
    ).toContain('read-only');
    expect(await readFile(path.join(workspace.root, 'inside.txt'), 'utf8')).toBe('hello\n');
  });

  it('leaves no descriptor open, whether a call succeeds or is refused', async () => {
    await mkdir(path.join(workspace.root, 'folder'));
    await symlink(workspace.outside, path.join(workspace.root, 'linked'));
    const calls: [string, unknown][] = [
      ['read_file', { path: 'inside.txt' }],
      ['read_file', { path: 'folder' }],
      ['read_file', { path: 'missing/deeper.txt' }],
      ['read_file', { path: 'inside.txt/below' }],
      ['list_dir', { path: '.' }],
      ['list_dir', { path: 'inside.txt' }],
      ['write_file', { path: 'folder/new.txt', content: 'x' }],
      ['write_file', { path: 'folder', content: 'x' }],
      ['write_file', { path: '.', content: 'x' }],
      ['edit_file', { path: 'folder/new.txt', oldString: 'x', newString: 'y' }],
      ['grep', { pattern: 'hello' }],
      ['glob', { pattern: '**/*' }],
      ['read_file', { path: 'linked/secret.txt' }],
    ];
    const before = readdirSync('/proc/self/fd').length;
    for (let round = 0; round < 3; round += 1) {
      for (const [name, args] of calls) await workspace.call(name, args);
    }
    expect(readdirSync('/proc/self/fd').length).toBe(before);
  });
});
