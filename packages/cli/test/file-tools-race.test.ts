import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { contentText, messagesOf, textReply } from '../../../test-support/cli-wire.js';
import { chatFinish, chatToolCallChunks, sseReply } from '../../../test-support/openai-wire.js';
import type { WireReply } from '../../../test-support/wire-server.js';
import { runCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

/**
 * The file tools under a race: a helper swaps a workspace folder with a symlink to a folder outside, as fast
 * as it can (renameat2 RENAME_EXCHANGE), while the scripted model issues 50 parallel calls per step through
 * that folder. Whatever the timing, every call must act inside the workspace or refuse.
 */
const harness = useCliHarness();

/** Calls per step, one step per run, and runs: 100 calls (a turn may make at most 100, its last answer included). */
const CALLS_PER_STEP = 50;
const RUNS = 2;

const OUTSIDE_SECRET = 'OUTSIDE-SECRET-31415';
const INSIDE_TEXT = 'inside-text-27182';
/** A file name only the outside folder holds: a listing that shows it went outside. */
const OUTSIDE_NAME = 'outside-only-16180';

/** Exchanges two paths in a loop with renameat2(RENAME_EXCHANGE); prints `swapping` after the first exchange. */
const SWAPPER = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
first, second = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
done = 0
while True:
    if libc.renameat2(-100, first, -100, second, 2) != 0:
        sys.exit('renameat2: ' + os.strerror(ctypes.get_errno()))
    done += 1
    if done == 1:
        print('swapping', flush=True)
`;

function python(): string | undefined {
  const found = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], {
    stdio: 'ignore',
  });
  return found.status === 0 ? 'python3' : undefined;
}

/** Starts the swapper; resolves once it has swapped at least once. */
async function startSwapper(first: string, second: string): Promise<ChildProcess> {
  const interpreter = python();
  if (interpreter === undefined) throw new Error('this test needs python3 with ctypes and glibc renameat2');
  const child = spawn(interpreter, ['-c', SWAPPER, first, second], { stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    said += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    said += chunk;
  });
  await vi.waitFor(() => expect(said).toContain('swapping'), { timeout: 10_000 });
  return child;
}

async function stopSwapper(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const ended = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await ended;
}

/** One model step that calls `name` once per arguments object, all in one answer. */
function parallelCalls(step: number, name: string, argsOf: (index: number) => unknown): WireReply {
  const calls = Array.from({ length: CALLS_PER_STEP }, (_, index) => ({
    id: `call_${step}_${index}`,
    name,
    fragments: [JSON.stringify(argsOf(step * CALLS_PER_STEP + index))],
  }));
  return sseReply([...chatToolCallChunks(calls), ...chatFinish({ finishReason: 'tool_calls', usage: null })]);
}

/** One model step that makes these calls, all in one answer. */
function mixedCalls(step: number, calls: { name: string; arguments: unknown }[]): WireReply {
  const chunks = chatToolCallChunks(
    calls.map((call, index) => ({
      id: `call_${step}_${index}`,
      name: call.name,
      fragments: [JSON.stringify(call.arguments)],
    })),
  );
  return sseReply([...chunks, ...chatFinish({ finishReason: 'tool_calls', usage: null })]);
}

/** Every tool result the model server received, by call id. */
function toolResults(): Map<string, string> {
  const results = new Map<string, string>();
  for (const request of harness.server.turnRequests()) {
    for (const message of messagesOf(request)) {
      if (message.role === 'tool' && message.tool_call_id !== undefined) {
        results.set(message.tool_call_id, contentText(message));
      }
    }
  }
  return results;
}

/** How many results of each kind (their text with paths and numbers left out), for the log. */
function summary(results: Map<string, string>): string {
  const kinds = new Map<string, number>();
  for (const content of results.values()) {
    const kind = content
      .replace(/'[^']*'/g, "'…'")
      .replace(/\d+/g, 'N')
      .slice(0, 80);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return [...kinds].map(([kind, count]) => `${count}× ${kind}`).join('\n');
}

/** Runs `youyou -p` RUNS times, each a step of parallel calls made by `step`, while the swapper runs. */
async function runWhileSwapping(options: {
  swapped: [string, string];
  step: (run: number) => WireReply;
  extraArgs?: string[];
}): Promise<void> {
  const swapper = await startSwapper(...options.swapped);
  try {
    for (let run = 0; run < RUNS; run += 1) {
      harness.server.reply(options.step(run), textReply('done'));
      const result = await runCli({
        args: ['-p', 'go', '--base-url', harness.server.baseURL, ...(options.extraArgs ?? [])],
        sandbox: harness.sandbox,
      });
      expect(result.code, result.stderr).toBe(0);
    }
  } finally {
    await stopSwapper(swapper);
  }
}

/** A workspace with `realdir/secret.txt`, a symlink `swap` to a folder outside, and that folder's secret. */
async function prepare(): Promise<{ outside: string; realdir: string; swap: string }> {
  const outside = path.join(harness.sandbox.root, 'outside');
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), `${OUTSIDE_SECRET}\n`);
  await writeFile(path.join(outside, `${OUTSIDE_NAME}.txt`), `${OUTSIDE_SECRET}\n`);
  const realdir = path.join(harness.sandbox.workspace, 'realdir');
  await mkdir(realdir);
  await writeFile(path.join(realdir, 'secret.txt'), `${INSIDE_TEXT}\n`);
  const swap = path.join(harness.sandbox.workspace, 'swap');
  await symlink(outside, swap);
  return { outside, realdir, swap };
}

/** The name (realdir or swap) under which the real folder is, once the swapper has stopped. */
async function realFolder(candidates: string[]): Promise<string> {
  for (const candidate of candidates) {
    if ((await lstat(candidate)).isDirectory()) return candidate;
  }
  throw new Error('neither name holds the real folder');
}

describe('the file tools under a folder-for-symlink race', () => {
  test('100 parallel read_file calls through a swapped folder never return the outside file', async () => {
    const { realdir, swap } = await prepare();
    await runWhileSwapping({
      swapped: [realdir, swap],
      step: (run) => parallelCalls(run, 'read_file', () => ({ path: 'realdir/secret.txt' })),
    });
    const results = toolResults();
    expect(results.size).toBe(RUNS * CALLS_PER_STEP);
    console.info(summary(results));
    let readInside = 0;
    const leaked = harness.server.wire.requests.filter((request) => request.rawBody.includes(OUTSIDE_SECRET));
    expect(leaked.length, 'requests that carried the outside file').toBe(0);
    for (const [id, content] of results) {
      // Each call read the inside file or refused; none returned anything else.
      if (content === `    1| ${INSIDE_TEXT}`) readInside += 1;
      else expect(content, id).toMatch(/outside the workspace|changed while it was being opened/);
    }
    console.info(
      `read_file under the race: ${readInside} of ${results.size} read the inside file, the rest refused`,
    );
  }, 120_000);

  test('100 write_file calls through a swapped folder never create a file outside', async () => {
    const { outside, realdir, swap } = await prepare();
    await runWhileSwapping({
      swapped: [realdir, swap],
      step: (run) =>
        parallelCalls(run, 'write_file', (index) => ({
          path: `realdir/new-${index}.txt`,
          content: `n${index}`,
        })),
      extraArgs: ['--yes'],
    });
    // Nothing appeared outside: the folder holds only its own secret, unchanged.
    expect((await readdir(outside)).sort()).toEqual([`${OUTSIDE_NAME}.txt`, 'secret.txt']);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe(`${OUTSIDE_SECRET}\n`);
    const results = toolResults();
    expect(results.size).toBe(RUNS * CALLS_PER_STEP);
    const folder = await realFolder([realdir, swap]);
    console.info(summary(results));
    let created = 0;
    for (const [id, content] of results) {
      const index = Number(id.split('_')[2]) + Number(id.split('_')[1]) * CALLS_PER_STEP;
      if (content.startsWith('Created')) {
        // Reported as created: it is in the workspace's real folder, with its content.
        created += 1;
        expect(await readFile(path.join(folder, `new-${index}.txt`), 'utf8')).toBe(`n${index}`);
      } else {
        expect(content, id).toMatch(/outside the workspace|changed while it was being opened/);
      }
    }
    console.info(`write_file under the race: ${created} of ${results.size} created inside, the rest refused`);
  }, 120_000);

  test('100 parallel grep, glob and list_dir calls never walk into the swapped folder', async () => {
    const { realdir, swap } = await prepare();
    const calls = [
      { name: 'grep', arguments: { pattern: 'SECRET|text' } },
      { name: 'grep', arguments: { pattern: 'SECRET|text', path: 'realdir' } },
      { name: 'glob', arguments: { pattern: '**/*.txt' } },
      { name: 'list_dir', arguments: { path: 'realdir' } },
    ];
    await runWhileSwapping({
      swapped: [realdir, swap],
      step: (run) =>
        mixedCalls(
          run,
          Array.from({ length: CALLS_PER_STEP }, (_, index) => calls[index % calls.length]!),
        ),
    });
    const results = toolResults();
    expect(results.size).toBe(RUNS * CALLS_PER_STEP);
    console.info(summary(results));
    for (const [id, content] of results) {
      expect(content, id).not.toContain(OUTSIDE_SECRET);
      expect(content, id).not.toContain(OUTSIDE_NAME);
    }
  }, 120_000);
});
