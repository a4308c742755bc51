import { mkdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { buildStale } from '../scripts/build-stale.mjs';

/**
 * Builds the stale dists that tests running child processes need (scripts/build-stale.mjs: by default what the
 * CLI binary imports), under one lock folder for every test file: vitest runs files in parallel workers, and two
 * builds writing one dist at once would leave a child process a half-written module.
 */
export async function buildUnderLock(packages?: string[]): Promise<void> {
  const lock = path.join(tmpdir(), 'youyou-test-build.lock');
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
      // A lock left by a killed run is stale after two minutes.
      const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > 120_000) await rm(lock, { recursive: true, force: true });
      if (Date.now() > deadline)
        throw new Error(`another test run holds ${lock}; remove it if no build is running`);
      await delay(100);
    }
  }
  try {
    await buildStale(packages === undefined ? {} : { packages });
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
