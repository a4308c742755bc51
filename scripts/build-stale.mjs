#!/usr/bin/env node
/**
 * Builds the workspaces whose dist is older than their sources, in dependency order, and nothing else:
 * `npm run youyou` and the CLI's end-to-end tests both use it, so an unchanged tree starts at once.
 * A package counts as stale when any file of its src/, its package.json, its tsconfig files or the shared
 * tsconfig.base.json is newer than the stamp its last successful build left in dist/; a package rebuilt
 * makes the later ones stale too (their types come from its dist).
 *
 * Usage: node scripts/build-stale.mjs [PACKAGE...]   (default: what the youyou binary imports)
 */
import { execFile } from 'node:child_process';
import { readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root. */
export const REPOSITORY = fileURLToPath(new URL('../', import.meta.url));

/** The workspaces the youyou binary imports, in build order. */
export const CLI_PACKAGES = [
  'agent',
  'openai',
  'anthropic',
  'sqlite',
  'postgres',
  'mcp',
  'otel',
  'server',
  'cli',
];

/** The file a successful build leaves in dist/; its time is when the package was last built. */
const STAMP = '.build-stamp';

async function mtimeOf(file) {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return 0;
  }
}

/** The newest modification time among a package's inputs. */
async function newestInput(packageFolder) {
  let newest = Math.max(
    await mtimeOf(path.join(REPOSITORY, 'tsconfig.base.json')),
    await mtimeOf(path.join(packageFolder, 'package.json')),
    await mtimeOf(path.join(packageFolder, 'tsconfig.json')),
    await mtimeOf(path.join(packageFolder, 'tsconfig.build.json')),
  );
  const source = path.join(packageFolder, 'src');
  // A folder's time changes when a file in it is added, removed or renamed.
  newest = Math.max(newest, await mtimeOf(source));
  for (const entry of await readdir(source, { withFileTypes: true, recursive: true })) {
    const info = await stat(path.join(entry.parentPath, entry.name));
    newest = Math.max(newest, info.mtimeMs);
  }
  return newest;
}

/**
 * Builds the stale packages of `packages` (names under packages/, in build order) with the workspace's
 * TypeScript; resolves with the names it built. `log` hears one line per package built.
 */
export async function buildStale(options = {}) {
  const packages = options.packages ?? CLI_PACKAGES;
  const log = options.log ?? (() => undefined);
  const tsc = path.join(REPOSITORY, 'node_modules', 'typescript', 'bin', 'tsc');
  const built = [];
  for (const name of packages) {
    const packageFolder = path.join(REPOSITORY, 'packages', name);
    const stamp = path.join(packageFolder, 'dist', STAMP);
    const stale = built.length > 0 || (await mtimeOf(stamp)) < (await newestInput(packageFolder));
    if (!stale) continue;
    log(`building packages/${name}…`);
    try {
      await run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: packageFolder });
    } catch (error) {
      throw new Error(`building packages/${name} failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    }
    await writeFile(stamp, `${new Date().toISOString()}\n`);
    built.push(name);
  }
  return built;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  try {
    await buildStale({
      packages: names.length > 0 ? names : CLI_PACKAGES,
      log: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
