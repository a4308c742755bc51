import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ToolHandler, ToolOutput } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCheckpointConfig } from '../src/config/checkpoints.js';
import { validateFileConfig } from '../src/config/schema.js';
import { CheckpointStore, checkpointFolder } from '../src/runtime/checkpoints.js';

/** A file name with a line feed, an ESC, a quote and a leading dash. */
const ODD_NAME = '-odd\nname\x1b[31m "q".txt';

let root: string;
let workspace: string;
let home: string;

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'youyou-checkpoints-'));
  workspace = path.join(root, 'workspace');
  home = path.join(root, 'home');
  mkdirSync(workspace);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** The paths a tree holds, as the store's own git lists them. */
function treePaths(store: CheckpointStore, tree: string): string[] {
  const gitDir = path.join(checkpointFolder(home, store.workspace), 'git');
  return execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', '--name-only', tree], {
    env: { PATH: process.env.PATH ?? '', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  })
    .toString('utf8')
    .split('\0')
    .filter((entry) => entry !== '')
    .sort();
}

/** A mutating tool that runs `change` in the workspace. */
function changingTool(change: () => void): ToolHandler {
  return {
    name: 'change',
    description: 'changes the workspace',
    parametersSchema: { type: 'object' },
    isMutating: true,
    execute: async (): Promise<ToolOutput> => {
      change();
      return { content: 'changed' } as ToolOutput;
    },
  };
}

async function call(tool: ToolHandler, turnId: string, callId: string): Promise<void> {
  await tool.execute({
    callId,
    arguments: {},
    sessionId: 'session-1',
    turnId,
    signal: new AbortController().signal,
  });
}

describe('CheckpointStore snapshots', () => {
  it("honours the workspace's .gitignore and leaves the user's .git out", async () => {
    writeFileSync(path.join(workspace, '.gitignore'), 'build/\n*.log\n');
    mkdirSync(path.join(workspace, 'build'));
    writeFileSync(path.join(workspace, 'build', 'out.js'), 'x');
    writeFileSync(path.join(workspace, 'debug.log'), 'x');
    writeFileSync(path.join(workspace, 'kept.txt'), 'x');
    execFileSync('git', ['init', '-q'], { cwd: workspace });
    const store = new CheckpointStore({ home, workspace });
    const { tree } = await store.snapshot();
    expect(treePaths(store, tree)).toEqual(['.gitignore', 'kept.txt']);
  });

  it('leaves out a file over the per-file cap and files past the total cap', async () => {
    writeFileSync(path.join(workspace, 'a-small.txt'), 'a'.repeat(10));
    writeFileSync(path.join(workspace, 'b-big.bin'), 'b'.repeat(2000));
    writeFileSync(path.join(workspace, 'c-small.txt'), 'c'.repeat(600));
    writeFileSync(path.join(workspace, 'd-small.txt'), 'd'.repeat(600));
    const store = new CheckpointStore({
      home,
      workspace,
      limits: { maxFileBytes: 1000, maxTotalBytes: 1000 },
    });
    const { tree, skipped } = await store.snapshot();
    expect(treePaths(store, tree)).toEqual(['a-small.txt', 'c-small.txt']);
    expect(skipped.sort()).toEqual(['b-big.bin', 'd-small.txt']);
  });

  it('stores a link as a link and never reads what it points to outside', async () => {
    const outside = path.join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    symlinkSync(outside, path.join(workspace, 'dir-link'));
    symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'file-link'));
    const store = new CheckpointStore({ home, workspace });
    const { tree } = await store.snapshot();
    expect(treePaths(store, tree)).toEqual(['dir-link', 'file-link']);
    const objects = execFileSync('git', [
      '--git-dir',
      path.join(checkpointFolder(home, store.workspace), 'git'),
      'cat-file',
      '--batch-all-objects',
      '--batch',
    ]).toString('utf8');
    expect(objects).not.toContain('secret\n');
    expect(objects).not.toMatch(/^secret$/m);
  });

  it('runs no filter a hostile .gitattributes asks for, on snapshot or restore', async () => {
    const marker = path.join(root, 'ran');
    writeFileSync(path.join(workspace, '.gitattributes'), '* filter=evil diff=evil\n');
    // Even a config in the store's own folder naming the filter must not be reached: nothing reads it but git,
    // and the filter is switched off by the store's attributes.
    writeFileSync(path.join(workspace, 'a.txt'), 'one\r\n');
    const store = new CheckpointStore({ home, workspace });
    await store.snapshot();
    const gitDir = path.join(checkpointFolder(home, store.workspace), 'git');
    execFileSync('git', ['--git-dir', gitDir, 'config', 'filter.evil.clean', `touch ${marker}; cat`]);
    execFileSync('git', ['--git-dir', gitDir, 'config', 'filter.evil.smudge', `touch ${marker}; cat`]);
    const tool = store.wrap(
      changingTool(() => writeFileSync(path.join(workspace, 'a.txt'), 'two\r\n')),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    const plan = await store.planUndo('session-1');
    if (plan === undefined) throw new Error('no plan');
    await store.apply(plan, false);
    expect(readFileSync(path.join(workspace, 'a.txt'), 'utf8')).toBe('one\r\n');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('CheckpointStore restores', () => {
  it('takes back a delete, a move and a new file, and keeps a file the user changed unless told', async () => {
    writeFileSync(path.join(workspace, 'doomed.txt'), 'doomed');
    writeFileSync(path.join(workspace, 'moved.txt'), 'moved');
    writeFileSync(path.join(workspace, 'mine.txt'), 'v1');
    writeFileSync(path.join(workspace, ODD_NAME), 'odd');
    const store = new CheckpointStore({ home, workspace });
    const tool = store.wrap(
      changingTool(() => {
        unlinkSync(path.join(workspace, 'doomed.txt'));
        unlinkSync(path.join(workspace, ODD_NAME));
        mkdirSync(path.join(workspace, 'sub'));
        execFileSync('mv', [path.join(workspace, 'moved.txt'), path.join(workspace, 'sub', 'moved.txt')]);
        writeFileSync(path.join(workspace, 'gen.txt'), 'x');
        writeFileSync(path.join(workspace, 'mine.txt'), 'v2');
      }),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    writeFileSync(path.join(workspace, 'mine.txt'), 'edited by the user');
    const plan = await store.planRewind('session-1', ['turn-1']);
    if (plan === undefined) throw new Error('no plan');
    expect(plan.userChanged).toEqual(['mine.txt']);
    const result = await store.apply(plan, false);
    expect(result.kept).toEqual(['mine.txt']);
    expect(readdirSync(workspace).sort()).toEqual(['doomed.txt', 'mine.txt', 'moved.txt', ODD_NAME].sort());
    expect(readFileSync(path.join(workspace, ODD_NAME), 'utf8')).toBe('odd');
    expect(readFileSync(path.join(workspace, 'mine.txt'), 'utf8')).toBe('edited by the user');
    expect(store.undoableCount('session-1')).toBe(0);
  });

  it('counts an edit the user made between two turns as theirs when rewinding past both', async () => {
    writeFileSync(path.join(workspace, 'mine.txt'), 'v1');
    const store = new CheckpointStore({ home, workspace });
    const first = store.wrap(
      changingTool(() => writeFileSync(path.join(workspace, 'a.txt'), 'a')),
      () => undefined,
    );
    const second = store.wrap(
      changingTool(() => writeFileSync(path.join(workspace, 'b.txt'), 'b')),
      () => undefined,
    );
    await call(first, 'turn-1', 'call-1');
    writeFileSync(path.join(workspace, 'mine.txt'), 'the user, between the turns');
    await call(second, 'turn-2', 'call-2');
    const plan = await store.planRewind('session-1', ['turn-1', 'turn-2']);
    if (plan === undefined) throw new Error('no plan');
    expect(plan.userChanged).toEqual(['mine.txt']);
    await store.apply(plan, false);
    expect(readdirSync(workspace).sort()).toEqual(['mine.txt']);
    expect(readFileSync(path.join(workspace, 'mine.txt'), 'utf8')).toBe('the user, between the turns');
  });

  it('keeps a file changed while the user was being asked, even when they said to overwrite', async () => {
    writeFileSync(path.join(workspace, 'a.txt'), 'v1');
    const store = new CheckpointStore({ home, workspace });
    const tool = store.wrap(
      changingTool(() => {
        writeFileSync(path.join(workspace, 'a.txt'), 'v2');
        writeFileSync(path.join(workspace, 'b.txt'), 'b');
      }),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    const plan = await store.planUndo('session-1');
    if (plan === undefined) throw new Error('no plan');
    writeFileSync(path.join(workspace, 'a.txt'), 'typed during the question');
    const result = await store.apply(plan, true);
    expect(result.kept).toEqual(['a.txt']);
    expect(readdirSync(workspace).sort()).toEqual(['a.txt']);
    expect(readFileSync(path.join(workspace, 'a.txt'), 'utf8')).toBe('typed during the question');
  });

  it('replaces a link the model put where a folder was, instead of writing through it', async () => {
    const outside = path.join(root, 'outside');
    mkdirSync(outside);
    mkdirSync(path.join(workspace, 'src'));
    writeFileSync(path.join(workspace, 'src', 'main.ts'), 'main');
    const store = new CheckpointStore({ home, workspace });
    const tool = store.wrap(
      changingTool(() => {
        rmSync(path.join(workspace, 'src'), { recursive: true });
        symlinkSync(outside, path.join(workspace, 'src'));
      }),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    const plan = await store.planUndo('session-1');
    if (plan === undefined) throw new Error('no plan');
    await store.apply(plan, false);
    expect(readdirSync(outside)).toEqual([]);
    expect(readFileSync(path.join(workspace, 'src', 'main.ts'), 'utf8')).toBe('main');
    expect(() => readlinkSync(path.join(workspace, 'src'))).toThrow();
  });
});

describe('CheckpointStore without git', () => {
  it('still runs the call, and says once that no checkpoint was taken', async () => {
    const savedPath = process.env.PATH;
    const emptyBin = path.join(root, 'empty-bin');
    mkdirSync(emptyBin);
    process.env.PATH = emptyBin;
    try {
      const warnings: string[] = [];
      const store = new CheckpointStore({ home, workspace });
      const tool = store.wrap(
        changingTool(() => writeFileSync(path.join(workspace, 'made.txt'), 'x')),
        (text) => warnings.push(text),
      );
      await call(tool, 'turn-1', 'call-1');
      await call(tool, 'turn-2', 'call-2');
      expect(readFileSync(path.join(workspace, 'made.txt'), 'utf8')).toBe('x');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('checkpoints need git');
      expect(store.undoableCount('session-1')).toBe(0);
    } finally {
      process.env.PATH = savedPath;
    }
  });
});

describe('CheckpointStore journal', () => {
  it('skips a line whose states are not git object names, so nothing of it reaches git as an option', async () => {
    const store = new CheckpointStore({ home, workspace });
    await store.snapshot();
    const marker = path.join(root, 'written-by-git');
    const forged = {
      kind: 'call',
      sessionId: 'session-1',
      turnId: 'turn-1',
      callId: 'call-1',
      tool: 'shell',
      before: `--output=${marker}`,
      after: `--output=${marker}`,
    };
    writeFileSync(
      path.join(checkpointFolder(home, store.workspace), 'journal.jsonl'),
      `${JSON.stringify(forged)}\n{cut`,
    );
    expect(store.undoableCount('session-1')).toBe(0);
    expect(await store.planUndo('session-1')).toBeUndefined();
    expect(await store.diff('session-1')).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
  });
});

describe('CheckpointStore index', () => {
  it("hands its index back on close, and the next store's snapshot starts from it", async () => {
    writeFileSync(path.join(workspace, 'a.txt'), 'a');
    const first = new CheckpointStore({ home, workspace });
    const { tree } = await first.snapshot();
    first.close();
    const folder = checkpointFolder(home, first.workspace);
    expect(
      readdirSync(folder)
        .filter((name) => name.startsWith('index'))
        .sort(),
    ).toEqual(['index']);
    const second = new CheckpointStore({ home, workspace });
    expect((await second.snapshot()).tree).toBe(tree);
    second.close();
    expect(
      readdirSync(folder)
        .filter((name) => name.startsWith('index'))
        .sort(),
    ).toEqual(['index']);
  });
});

describe('CheckpointStore forks', () => {
  it("lets a fork take back its source's calls from before the fork, leaving the source's journal as it was", async () => {
    const store = new CheckpointStore({ home, workspace });
    const tool = store.wrap(
      changingTool(() => writeFileSync(path.join(workspace, 'made.txt'), 'x')),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    store.recordFork('session-1', 'fork-1');
    expect(store.undoableCount('fork-1')).toBe(1);
    const plan = await store.planRewind('fork-1', ['turn-1']);
    if (plan === undefined) throw new Error('no plan');
    await store.apply(plan, false);
    expect(existsSync(path.join(workspace, 'made.txt'))).toBe(false);
    expect(store.undoableCount('fork-1')).toBe(0);
    expect(store.undoableCount('session-1')).toBe(1);
  });
});

describe('the "checkpoints" config', () => {
  it('takes false or byte limits, and says what to fix otherwise', () => {
    const warn = (): void => undefined;
    expect(validateFileConfig({ file: 'config.json', data: { checkpoints: false }, warn }).checkpoints).toBe(
      false,
    );
    expect(parseCheckpointConfig('config.json', { maxFileBytes: 5 })).toEqual({ maxFileBytes: 5 });
    expect(() => parseCheckpointConfig('config.json', { maxFileBytes: -1 })).toThrow(
      '"checkpoints.maxFileBytes" must be a whole number of bytes',
    );
    expect(() => parseCheckpointConfig('config.json', { maxFiles: 1 })).toThrow('known: maxFileBytes');
    expect(() => parseCheckpointConfig('config.json', true)).toThrow('must be false or an object');
  });
});

describe('CheckpointStore restores around what a snapshot left out', () => {
  const small = { maxFileBytes: 1000, maxTotalBytes: 100_000 };
  const file = (name: string) => path.join(workspace, name);

  async function undo(store: CheckpointStore, overwrite: boolean) {
    const plan = await store.planUndo('session-1');
    if (plan === undefined) throw new Error('no plan');
    return { plan, result: await store.apply(plan, overwrite) };
  }

  it('keeps a file the session grew past the cap and the user then edited, unless told', async () => {
    writeFileSync(file('big.txt'), 'a'.repeat(500));
    const store = new CheckpointStore({ home, workspace, limits: small });
    const tool = store.wrap(
      changingTool(() => writeFileSync(file('big.txt'), 'b'.repeat(2000))),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    writeFileSync(file('big.txt'), 'u'.repeat(3000));
    const { plan, result } = await undo(store, false);
    expect(plan.userChanged).toEqual(['big.txt']);
    expect(result.kept).toEqual(['big.txt']);
    expect(readFileSync(file('big.txt'), 'utf8')).toBe('u'.repeat(3000));
  });

  it('neither deletes nor writes a file that was over the cap then and is small now, even when told', async () => {
    writeFileSync(file('big.txt'), 'a'.repeat(2000));
    const store = new CheckpointStore({ home, workspace, limits: small });
    const tool = store.wrap(
      changingTool(() => writeFileSync(file('big.txt'), 'short')),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    const { plan } = await undo(store, true);
    expect(plan.leftOut).toEqual(['big.txt']);
    expect(readFileSync(file('big.txt'), 'utf8')).toBe('short');
  });

  it('leaves a file that was ignored then in place when the session un-ignored it', async () => {
    writeFileSync(file('.gitignore'), 'secret.env\n');
    writeFileSync(file('secret.env'), 'KEY=1');
    const store = new CheckpointStore({ home, workspace, limits: small });
    const tool = store.wrap(
      changingTool(() => writeFileSync(file('.gitignore'), '')),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    await undo(store, true);
    expect(readFileSync(file('.gitignore'), 'utf8')).toBe('secret.env\n');
    expect(readFileSync(file('secret.env'), 'utf8')).toBe('KEY=1');
  });

  it('keeps a file that became ignored by the session and was edited after, unless told', async () => {
    writeFileSync(file('notes.txt'), 'v1');
    const store = new CheckpointStore({ home, workspace, limits: small });
    const tool = store.wrap(
      changingTool(() => {
        writeFileSync(file('.gitignore'), 'notes.txt\n');
        writeFileSync(file('notes.txt'), 'v2');
      }),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    writeFileSync(file('notes.txt'), 'the user');
    const { plan } = await undo(store, false);
    expect(plan.userChanged).toEqual(['notes.txt']);
    expect(existsSync(file('.gitignore'))).toBe(false);
    expect(readFileSync(file('notes.txt'), 'utf8')).toBe('the user');
  });

  it('keeps a link the user put where a file was, and what it points to', async () => {
    const outside = path.join(root, 'outside.txt');
    writeFileSync(outside, 'outside');
    writeFileSync(file('f.txt'), 'v1');
    const store = new CheckpointStore({ home, workspace, limits: small });
    const tool = store.wrap(
      changingTool(() => writeFileSync(file('f.txt'), 'v2')),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    unlinkSync(file('f.txt'));
    symlinkSync(outside, file('f.txt'));
    const { plan } = await undo(store, false);
    expect(plan.userChanged).toEqual(['f.txt']);
    expect(readlinkSync(file('f.txt'))).toBe(outside);
    expect(readFileSync(outside, 'utf8')).toBe('outside');
  });

  it('never empties a folder the user put where a file was, even when told to overwrite', async () => {
    writeFileSync(file('.gitignore'), '*.log\n');
    writeFileSync(file('f'), 'v1');
    const store = new CheckpointStore({ home, workspace, limits: small });
    const tool = store.wrap(
      changingTool(() => unlinkSync(file('f'))),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    mkdirSync(file('f'));
    writeFileSync(file('f/run.log'), 'ignored, never recorded');
    const { plan, result } = await undo(store, true);
    expect(plan.userChanged).toEqual(['f']);
    expect(result.kept).toEqual(['f']);
    expect(readFileSync(file('f/run.log'), 'utf8')).toBe('ignored, never recorded');
  });

  it('keeps a file under a file the user put where a folder was', async () => {
    mkdirSync(file('d'));
    writeFileSync(file('d/a.txt'), 'a');
    const store = new CheckpointStore({ home, workspace, limits: small });
    const tool = store.wrap(
      changingTool(() => rmSync(file('d'), { recursive: true })),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    writeFileSync(file('d'), 'x'.repeat(5000));
    const { result } = await undo(store, true);
    expect(result.kept).toEqual(['d/a.txt']);
    expect(readFileSync(file('d'), 'utf8')).toBe('x'.repeat(5000));
  });

  it('keeps a file the user changed and made unreadable (mode 000; as root it is read and recorded), unless told', async () => {
    writeFileSync(file('f.txt'), 'v1');
    const store = new CheckpointStore({ home, workspace, limits: small });
    const tool = store.wrap(
      changingTool(() => writeFileSync(file('f.txt'), 'v2')),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    writeFileSync(file('f.txt'), 'the user');
    chmodSync(file('f.txt'), 0o000);
    const { plan } = await undo(store, false);
    expect(plan.userChanged).toEqual(['f.txt']);
    chmodSync(file('f.txt'), 0o600);
    expect(readFileSync(file('f.txt'), 'utf8')).toBe('the user');
  });

  it('keeps a file the user edited while a state in between left it out, when rewinding past it', async () => {
    writeFileSync(file('.gitignore'), '*.log\n');
    const store = new CheckpointStore({ home, workspace, limits: small });
    const first = store.wrap(
      changingTool(() => writeFileSync(file('app.log'), 'generated\n')),
      () => undefined,
    );
    const second = store.wrap(
      changingTool(() => writeFileSync(file('.gitignore'), '')),
      () => undefined,
    );
    await call(first, 'turn-1', 'call-1');
    writeFileSync(file('app.log'), 'generated\nthe user, while it was ignored\n');
    await call(second, 'turn-2', 'call-2');
    const plan = await store.planRewind('session-1', ['turn-1', 'turn-2']);
    if (plan === undefined) throw new Error('no plan');
    expect(plan.userChanged).toEqual(['app.log']);
    await store.apply(plan, false);
    expect(readFileSync(file('.gitignore'), 'utf8')).toBe('*.log\n');
    expect(readFileSync(file('app.log'), 'utf8')).toBe('generated\nthe user, while it was ignored\n');
  });

  it('keeps a file the session created and the user then edited, unless told', async () => {
    const store = new CheckpointStore({ home, workspace, limits: small });
    const tool = store.wrap(
      changingTool(() => writeFileSync(file('new.txt'), 'generated')),
      () => undefined,
    );
    await call(tool, 'turn-1', 'call-1');
    writeFileSync(file('new.txt'), 'generated, then edited');
    const { plan } = await undo(store, false);
    expect(plan.userChanged).toEqual(['new.txt']);
    expect(readFileSync(file('new.txt'), 'utf8')).toBe('generated, then edited');
  });
});
