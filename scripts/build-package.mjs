#!/usr/bin/env node
/**
 * Builds one workspace package (`tsc -p tsconfig.build.json` in its folder) and leaves the stamp that
 * scripts/build-stale.mjs compares its sources with. Every package's `npm run build` goes through here, so a
 * tree built with `npm run build` counts as fresh; the stamp is dated when the build started, so a source saved
 * while tsc ran still counts as newer than the build.
 *
 * Usage (from a package folder): node ../../scripts/build-package.mjs
 */
import { execFile } from 'node:child_process';
import { utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root. */
export const REPOSITORY = fileURLToPath(new URL('../', import.meta.url));

/** The file a successful build leaves in dist/; its modification time is when that build started. */
export const STAMP = '.build-stamp';

/** Builds the package in `packageFolder` with the workspace's TypeScript, then stamps its dist. */
export async function buildPackage(packageFolder) {
  const tsc = path.join(REPOSITORY, 'node_modules', 'typescript', 'bin', 'tsc');
  const started = new Date();
  try {
    await run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: packageFolder });
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
    throw new Error(`building ${path.relative(REPOSITORY, packageFolder)} failed:\n${output}`);
  }
  const stamp = path.join(packageFolder, 'dist', STAMP);
  await writeFile(stamp, `${started.toISOString()}\n`);
  await utimes(stamp, started, started);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    await buildPackage(process.cwd());
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
