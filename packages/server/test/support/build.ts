import { mkdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { buildStale } from '../../../../scripts/build-stale.mjs';

/**
 * Builds the stale dist of agent, postgres and server that the server child processes run. Under the lock
 * folder of the CLI's end-to-end tests (packages/cli/test/support/build.ts), so test files running in
 * parallel never write one dist at the same time.
 */
export async function ensureServerBuilt(): Promise<void> {
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
    await buildStale({ packages: ['agent', 'postgres', 'server'] });
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
