import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root. */
export const REPOSITORY = fileURLToPath(new URL('../../../../', import.meta.url));
/** The binary the end-to-end tests run. */
export const BIN = path.join(REPOSITORY, 'packages/cli/dist/bin.js');

/** The workspaces the binary imports, in build order (each one's types come from the dist of those before). */
const PACKAGES = ['agent', 'openai', 'anthropic', 'sqlite', 'mcp', 'cli'];

async function newestSource(folder: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const info = await stat(path.join(entry.parentPath, entry.name));
    newest = Math.max(newest, info.mtimeMs);
  }
  return newest;
}

async function builtAt(packageName: string): Promise<number> {
  try {
    return (await stat(path.join(REPOSITORY, 'packages', packageName, 'dist/index.js'))).mtimeMs;
  } catch {
    return 0;
  }
}

/** Builds the packages whose dist is older than their source, earliest first; a package rebuilt forces the later ones. */
async function buildStale(): Promise<void> {
  let rebuilt = false;
  for (const name of PACKAGES) {
    const packageFolder = path.join(REPOSITORY, 'packages', name);
    const stale = rebuilt || (await builtAt(name)) < (await newestSource(path.join(packageFolder, 'src')));
    if (!stale) continue;
    try {
      await run('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: packageFolder });
    } catch (error) {
      const output = error as { stdout?: string; stderr?: string };
      throw new Error(`building packages/${name} failed:\n${output.stdout ?? ''}${output.stderr ?? ''}`);
    }
    rebuilt = true;
  }
}

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
    await buildStale();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
