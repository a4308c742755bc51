import { mkdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { buildStale, REPOSITORY } from '../../../../scripts/build-stale.mjs';

export { REPOSITORY };
/** The binary the end-to-end tests run. */
export const BIN = path.join(REPOSITORY, 'packages/cli/dist/bin.js');

/**
 * Builds what `node packages/cli/dist/bin.js` needs, once for all test files: vitest runs files in parallel
 * workers, so a lock folder makes the others wait (bounded) while one builds; nothing is rebuilt when every
 * dist is newer than its source.
 */
export async function ensureBuilt(): Promise<void> {
  const lock = path.join(tmpdir(), 'youyou-cli-test-build.lock');
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
    // The same staleness rule as `npm run youyou` (scripts/build-stale.mjs).
    await buildStale();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
