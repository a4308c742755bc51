import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { transformWithOxc } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SOURCE = fileURLToPath(new URL('../src/kernel/deadlines.ts', import.meta.url));
const TEN_MINUTES = 600_000;
/** The scheduler's source as JavaScript in a temporary folder (it imports nothing), for a child node to import. */
let folder = '';
let moduleUrl = '';

/** Runs `body` as an ES module in a fresh node with the built scheduler imported as `deadlines`; its exit. */
async function childRunning(body: string): Promise<string> {
  const source = `import { deadlines } from ${JSON.stringify(moduleUrl)};\n${body}`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', source], { timeout: 15_000 });
  return stdout;
}

// The process is what a pending bound keeps alive, or must not: these run the scheduler in a child node and
// wait for it to end (a timer left behind would hold it for ten minutes, past the test's time).
describe('the shared deadline timer and the life of the process', () => {
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'youyou-deadlines-'));
    const compiled = await transformWithOxc(await readFile(SOURCE, 'utf8'), SOURCE);
    const file = path.join(folder, 'deadlines.mjs');
    await writeFile(file, compiled.code);
    moduleUrl = pathToFileURL(file).href;
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('keeps the process alive while a deadline is pending, until it fired', async () => {
    const stdout = await childRunning(`deadlines.schedule(30, () => console.log('fired'), undefined);`);
    expect(stdout).toBe('fired\n');
  });

  it('lets the process end once its only deadline was cancelled, without waiting for the armed timer', async () => {
    const stdout = await childRunning(
      `const far = deadlines.schedule(${TEN_MINUTES}, () => console.log('fired'), undefined);
       deadlines.cancel(far);
       console.log('cancelled');`,
    );
    expect(stdout).toBe('cancelled\n');
  });

  it('lets the process end after the last pending deadline fired, a cancelled earlier-armed one never firing', async () => {
    const stdout = await childRunning(
      `const far = deadlines.schedule(${TEN_MINUTES}, () => console.log('far fired'), undefined);
       deadlines.schedule(30, () => {
         console.log('near fired');
         // Once the firing is over and the scheduler idle again: a state, not a duration.
         setImmediate(() => {
           const late = deadlines.schedule(${TEN_MINUTES}, () => console.log('late fired'), undefined);
           deadlines.schedule(20, () => console.log('last fired'), undefined);
           deadlines.cancel(late);
         });
       }, undefined);
       deadlines.cancel(far);`,
    );
    expect(stdout).toBe('near fired\nlast fired\n');
  });
});
