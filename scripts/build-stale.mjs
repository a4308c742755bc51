#!/usr/bin/env node
/**
 * Builds the workspaces whose dist is older than their sources, in dependency order, and nothing else:
 * `npm run youyou` and the CLI's end-to-end tests both use it, so an unchanged tree starts at once.
 * A package counts as stale when any file of its src/, its package.json, its tsconfig files or the shared
 * tsconfig.base.json is newer than the stamp its last successful build left in dist/ (scripts/build-package.mjs
 * leaves it, for this script and for every package's `npm run build`), or when a workspace package it depends
 * on was built after it (its types come from that package's dist).
 *
 * Usage: node scripts/build-stale.mjs [PACKAGE...]   (default: what the youyou binary imports)
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPackage, REPOSITORY, STAMP } from './build-package.mjs';

export { REPOSITORY };

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

/** The folders (under packages/) of the workspace packages that `packageFolder` depends on. */
async function workspaceDependencies(packageFolder) {
  const manifest = JSON.parse(await readFile(path.join(packageFolder, 'package.json'), 'utf8'));
  return Object.keys(manifest.dependencies ?? {})
    .filter((name) => name.startsWith('@youyou/'))
    .map((name) => path.join(REPOSITORY, 'packages', name.slice('@youyou/'.length)));
}

/** Whether the package needs a build: an input is newer than its stamp, or a dependency was built after it. */
async function isStale(packageFolder) {
  const built = await mtimeOf(path.join(packageFolder, 'dist', STAMP));
  if (built < (await newestInput(packageFolder))) return true;
  for (const dependency of await workspaceDependencies(packageFolder)) {
    if ((await mtimeOf(path.join(dependency, 'dist', STAMP))) > built) return true;
  }
  return false;
}

/**
 * Builds the stale packages of `packages` (names under packages/, in build order) with the workspace's
 * TypeScript; resolves with the names it built. `log` hears one line per package built.
 */
export async function buildStale(options = {}) {
  const packages = options.packages ?? CLI_PACKAGES;
  const log = options.log ?? (() => undefined);
  const built = [];
  for (const name of packages) {
    const packageFolder = path.join(REPOSITORY, 'packages', name);
    if (!(await isStale(packageFolder))) continue;
    log(`building packages/${name}…`);
    await buildPackage(packageFolder);
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
