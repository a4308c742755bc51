import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  absentAgentConfig,
  removeCreatedAgentConfig,
  workspaceProtection,
} from '../src/sandbox/workspace.js';

let base: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'youyou-sandbox-workspace-')));
});

afterEach(() => rm(base, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: base, GIT_CONFIG_NOSYSTEM: '1' },
    stdio: 'ignore',
  });
}

describe('workspaceProtection', () => {
  test('a linked worktree inside the workspace, core.hooksPath and a missing hooks folder', async () => {
    const workspace = path.join(base, 'ws');
    await mkdir(workspace);
    git(workspace, 'init', '-q', '.');
    git(workspace, 'commit', '-q', '--allow-empty', '-m', 'one');
    git(workspace, 'worktree', 'add', '--quiet', '-b', 'side', path.join(workspace, 'wt'));
    git(workspace, 'config', 'core.hooksPath', '.husky');
    await mkdir(path.join(workspace, '.husky'));
    await rm(path.join(workspace, '.git', 'hooks'), { recursive: true });

    const protection = workspaceProtection(workspace);
    const gitDir = path.join(workspace, '.git');
    expect(protection.pinned).toEqual(expect.arrayContaining([gitDir, path.join(gitDir, 'worktrees', 'wt')]));
    expect(protection.readOnly).toEqual(
      expect.arrayContaining([
        path.join(gitDir, 'config'),
        path.join(gitDir, 'hooks'),
        path.join(gitDir, 'info'),
        path.join(workspace, 'wt', '.git'),
        path.join(workspace, '.husky'),
      ]),
    );
    // Created so that it can be bound read-only.
    expect(existsSync(path.join(gitDir, 'hooks'))).toBe(true);
  });

  test('from inside a linked worktree, the .git file and the common folder are protected', async () => {
    const workspace = path.join(base, 'ws');
    await mkdir(workspace);
    git(workspace, 'init', '-q', '.');
    git(workspace, 'commit', '-q', '--allow-empty', '-m', 'one');
    git(workspace, 'worktree', 'add', '--quiet', '-b', 'side', path.join(workspace, 'wt'));
    const protection = workspaceProtection(path.join(workspace, 'wt'));
    // The common folder lies outside this workspace (read-only already): only the .git file needs a mount.
    expect(protection.readOnly).toEqual([path.join(workspace, 'wt', '.git')]);
    expect(workspaceProtection(workspace).readOnly).toContain(path.join(workspace, '.git', 'config'));
  });

  test('no repository: only the agent configuration that exists', async () => {
    await writeFile(path.join(base, 'AGENTS.md'), 'x');
    expect(workspaceProtection(base)).toEqual({ pinned: [], readOnly: [path.join(base, 'AGENTS.md')] });
  });
});

describe('removeCreatedAgentConfig', () => {
  test('removes what appeared under an absent name, a symlink without following it', async () => {
    const outside = path.join(base, 'outside');
    const workspace = path.join(base, 'ws');
    await mkdir(outside);
    await mkdir(workspace);
    await writeFile(path.join(outside, 'keep.txt'), 'keep');
    const absent = absentAgentConfig(workspace);
    expect(absent).toEqual(['AGENTS.md', '.youyou', '.agents']);
    await symlink(outside, path.join(workspace, '.agents'));
    await mkdir(path.join(workspace, '.youyou', 'skills'), { recursive: true });
    expect(removeCreatedAgentConfig(workspace, absent)).toEqual(['.youyou', '.agents']);
    expect(existsSync(path.join(workspace, '.agents'))).toBe(false);
    expect(existsSync(path.join(workspace, '.youyou'))).toBe(false);
    expect(await readFile(path.join(outside, 'keep.txt'), 'utf8')).toBe('keep');
  });
});
