import { type FileHandle, mkdir, open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

let workspace: TestWorkspace;

async function put(file: string, content: string | Buffer): Promise<void> {
  await mkdir(path.dirname(path.join(workspace.root, file)), { recursive: true });
  await writeFile(path.join(workspace.root, file), content);
}

beforeEach(async () => {
  workspace = await makeWorkspace();
});

afterEach(() => workspace.cleanup());

// A backtracking engine takes minutes on these patterns; the suite's test timeout (20 s) is what fails such a run,
// so these tests assert the answers and never a wall time (which a loaded machine could exceed).
describe('patterns that make a backtracking engine run away', () => {
  it('grep answers `(a+)+$` over long lines of a’s at once', async () => {
    // In V8 `/(a+)+$/.test('a'.repeat(40) + 'b')` alone takes minutes.
    await put('aaa.txt', `${'a'.repeat(60)}b\n${'a'.repeat(60)}\n`.repeat(200));
    const output = await workspace.call('grep', { pattern: '(a+)+$' });
    expect(output.isError).toBe(false);
    expect(output.content.split('\n')).toHaveLength(200);
    expect(output.content.split('\n')[0]).toBe(`aaa.txt:2: ${'a'.repeat(60)}`);
  });

  it('glob answers `*a*a*a*a*a*a*b` over long names of a’s at once', async () => {
    for (let index = 0; index < 20; index += 1) await put(`${'a'.repeat(200)}${index}`, '');
    await put(`${'a'.repeat(100)}b`, '');
    const output = await workspace.call('glob', { pattern: '*a*a*a*a*a*a*b' });
    expect(output.content).toBe(`${'a'.repeat(100)}b`);
  });

  it('grep stops at once when its signal fires, even inside one large file', async () => {
    // 200,000 lines whose last one matches: a grep that reads to the end finds it.
    await put('big.txt', `${`${'x'.repeat(60)}\n`.repeat(199_999)}needle y\n`);
    // The test owns grep's clock: every reading is 1 ms after the one before, so matching lets the event loop in
    // after the same number of lines on any machine (its busy bound is 50 ms), however fast the machine is.
    let readings = 0;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => {
      readings += 1;
      return readings;
    });
    try {
      const whole = await workspace.call('grep', { pattern: 'needle', path: 'big.txt' });
      expect(whole.content).toBe('big.txt:200000: needle y');
      const wholeReadings = readings;

      readings = 0;
      const controller = new AbortController();
      // Runs whenever grep lets the event loop in; it cancels once grep has been matching for a while (the clock
      // is read every 256 lines), i.e. in the middle of the file.
      const cancelWhenMatching = (): void => {
        if (readings >= 10) controller.abort();
        else setImmediate(cancelWhenMatching);
      };
      setImmediate(cancelWhenMatching);
      const output = await workspace.call('grep', { pattern: 'needle', path: 'big.txt' }, controller.signal);
      expect(controller.signal.aborted).toBe(true);
      expect(output.isError).toBe(true);
      expect(output.content).not.toContain('needle y');
      // It stopped at the first turn it let in after the cancel, far from the end.
      expect(readings).toBeLessThan(wholeReadings / 4);
    } finally {
      clock.mockRestore();
    }
  });

  it('grep hears a cancel that fired while it read a file, before it matches a line of that file', async () => {
    await put('one.txt', 'needle z\n');
    expect((await workspace.call('grep', { pattern: 'needle', path: 'one.txt' })).content).toBe(
      'one.txt:1: needle z',
    );
    // The test's hook cancels as the read completes: grep gets the whole file after the signal has fired, and
    // its matching (which yields only after MAX_BUSY_MS) would otherwise report the line.
    const controller = new AbortController();
    const probe = await open(path.join(workspace.root, 'one.txt'));
    type ReadFile = (this: FileHandle, options?: unknown) => Promise<Buffer | string>;
    const fileHandles = Object.getPrototypeOf(probe) as { readFile: ReadFile };
    await probe.close();
    const readFile = fileHandles.readFile;
    const readThenCancel = vi.spyOn(fileHandles, 'readFile').mockImplementation(async function (
      this: FileHandle,
      options?: unknown,
    ) {
      const bytes = await readFile.call(this, options);
      controller.abort();
      return bytes;
    });
    try {
      const output = await workspace.call('grep', { pattern: 'needle', path: 'one.txt' }, controller.signal);
      expect(readThenCancel).toHaveBeenCalled();
      expect(output.isError).toBe(true);
      expect(output.content).not.toContain('needle z');
    } finally {
      readThenCancel.mockRestore();
    }
  });

  it('numbers lines right across the pieces a large file is decoded in, LF or CRLF', async () => {
    const numbered = Array.from({ length: 60_000 }, (_, index) => `n${index + 1}`);
    await put('lf.txt', `${numbered.join('\n')}\n`);
    await put('crlf.txt', `${numbered.join('\r\n')}\r\n`);
    for (const file of ['lf.txt', 'crlf.txt']) {
      const output = await workspace.call('grep', { pattern: '^n(1|39999|40000|60000)$', path: file });
      expect(output.content).toBe(
        [1, 39999, 40000, 60000].map((line) => `${file}:${line}: n${line}`).join('\n'),
      );
    }
  });

  it('refuses lookaround and backreferences with a message saying so, instead of running them', async () => {
    await put('a.txt', 'aa\n');
    for (const pattern of ['(a)\\1', 'a(?=a)', '(?<!b)a']) {
      const output = await workspace.call('grep', { pattern });
      expect(output.isError).toBe(true);
      expect(output.content).toContain('not supported');
    }
  });

  it('keeps JavaScript spellings RE2 writes differently', async () => {
    await put('a.txt', 'name: Ada\nid: 42\n');
    expect((await workspace.call('grep', { pattern: '(?<key>\\w+): \\u0041' })).content).toBe(
      'a.txt:1: name: Ada',
    );
    expect((await workspace.call('grep', { pattern: '\\d+$' })).content).toBe('a.txt:2: id: 42');
  });
});

describe('.gitignore', () => {
  beforeEach(async () => {
    await put('.gitignore', 'dist/\n*.log\n!keep.log\n/top-only.txt\n');
    await put('src/app.ts', 'needle\n');
    await put('src/debug.log', 'needle\n');
    await put('src/keep.log', 'needle\n');
    await put('dist/app.js', 'needle\n');
    await put('top-only.txt', 'needle\n');
    await put('src/top-only.txt', 'needle\n');
    await put('pkg/.gitignore', 'generated/\n!*.log\n');
    await put('pkg/generated/x.ts', 'needle\n');
    await put('pkg/trace.log', 'needle\n');
    await put('pkg/lib.ts', 'needle\n');
  });

  const visible = ['pkg/lib.ts', 'pkg/trace.log', 'src/app.ts', 'src/keep.log', 'src/top-only.txt'];

  it('glob leaves out what the root and nested .gitignore files ignore', async () => {
    const output = await workspace.call('glob', { pattern: '**/*' });
    expect(output.content.split('\n')).toEqual(['.gitignore', 'pkg/.gitignore', ...visible]);
  });

  it('grep leaves out the same files', async () => {
    const output = await workspace.call('grep', { pattern: 'needle' });
    expect(output.content.split('\n').map((line) => line.split(':')[0])).toEqual(visible);
  });

  it('applies the rules of folders above the one searched', async () => {
    const output = await workspace.call('grep', { pattern: 'needle', path: 'src' });
    expect(output.content.split('\n').map((line) => line.split(':')[0])).toEqual([
      'src/app.ts',
      'src/keep.log',
      'src/top-only.txt',
    ]);
  });

  it('matches a .gitignore rule made to backtrack without running away', async () => {
    await put('deep/.gitignore', '*a*a*a*a*a*a*a*a*b\n*.tmp\n');
    await put(`deep/${'a'.repeat(200)}`, '');
    await put('deep/x.tmp', '');
    // A backtracking matcher takes minutes on this rule: the test timeout, not a wall-time assertion, fails it.
    const output = await workspace.call('glob', { pattern: 'deep/*' });
    expect(output.content.split('\n')).toEqual(['deep/.gitignore', `deep/${'a'.repeat(200)}`]);
  });

  it('reads the .gitignore files of the repository above the workspace, unless they ignore the workspace', async () => {
    const repository = path.dirname(workspace.root);
    await mkdir(path.join(repository, '.git', 'info'), { recursive: true });
    await writeFile(path.join(repository, '.gitignore'), '*.ts\n');
    await writeFile(path.join(repository, '.git', 'info', 'exclude'), 'top-only.txt\n');
    const output = await workspace.call('grep', { pattern: 'needle' });
    expect(output.content.split('\n').map((line) => line.split(':')[0])).toEqual([
      'pkg/trace.log',
      'src/keep.log',
    ]);
    await writeFile(path.join(repository, '.gitignore'), `${path.basename(workspace.root)}/\n`);
    const inIgnored = await workspace.call('grep', { pattern: 'needle' });
    expect(inIgnored.content.split('\n').map((line) => line.split(':')[0])).toEqual(visible);
  });

  it('searches an ignored folder when it is named on purpose', async () => {
    expect((await workspace.call('grep', { pattern: 'needle', path: 'dist' })).content).toBe(
      'dist/app.js:1: needle',
    );
    expect((await workspace.call('glob', { pattern: 'dist/*.js' })).content).toBe('dist/app.js');
  });
});
