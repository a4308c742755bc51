import { execFile } from 'node:child_process';
import {
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPOSITORY } from '../../../scripts/build-package.mjs';

const run = promisify(execFile);

/**
 * A copy of the repository's sources, scripts and build settings in a temporary folder, with node_modules made
 * of links to the real one's packages (and @youyou/* to the copy's), so building it never rewrites the dists
 * that other test files run.
 */
async function copyRepository(): Promise<string> {
  const copy = await mkdtemp(path.join(tmpdir(), 'youyou-build-stale-'));
  const manifest = JSON.parse(await readFile(path.join(REPOSITORY, 'package.json'), 'utf8'));
  manifest.workspaces = ['packages/*'];
  await writeFile(path.join(copy, 'package.json'), JSON.stringify(manifest, null, 2));
  await cp(path.join(REPOSITORY, 'tsconfig.base.json'), path.join(copy, 'tsconfig.base.json'));
  await cp(path.join(REPOSITORY, 'scripts'), path.join(copy, 'scripts'), { recursive: true });
  const packages = await readdir(path.join(REPOSITORY, 'packages'));
  for (const name of packages) {
    const from = path.join(REPOSITORY, 'packages', name);
    const to = path.join(copy, 'packages', name);
    await cp(from, to, {
      recursive: true,
      filter: (source) => {
        const relative = path.relative(from, source).split(path.sep)[0] ?? '';
        return !['dist', 'test', 'node_modules'].includes(relative);
      },
    });
    const ownModules = path.join(from, 'node_modules');
    if ((await stat(ownModules).catch(() => undefined)) !== undefined) {
      await symlink(ownModules, path.join(to, 'node_modules'));
    }
  }
  const modules = path.join(copy, 'node_modules');
  await mkdir(path.join(modules, '@youyou'), { recursive: true });
  for (const entry of await readdir(path.join(REPOSITORY, 'node_modules'))) {
    if (entry === '@youyou' || entry === '.bin' || entry.startsWith('.package-lock')) continue;
    await symlink(path.join(REPOSITORY, 'node_modules', entry), path.join(modules, entry));
  }
  for (const name of packages) {
    await symlink(path.join(copy, 'packages', name), path.join(modules, '@youyou', name));
  }
  return copy;
}

/** The modification time of each package's build stamp, by package folder name. */
async function stamps(copy: string): Promise<Record<string, number>> {
  const times: Record<string, number> = {};
  for (const name of await readdir(path.join(copy, 'packages'))) {
    times[name] = (await stat(path.join(copy, 'packages', name, 'dist', '.build-stamp'))).mtimeMs;
  }
  return times;
}

/** The packages whose stamp differs between two readings. */
function rebuilt(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.keys(after)
    .filter((name) => after[name] !== before[name])
    .sort();
}

describe('scripts/build-stale.mjs after npm run build', () => {
  let copy = '';

  beforeAll(async () => {
    copy = await copyRepository();
    await run('npm', ['run', 'build'], { cwd: copy });
  }, 180_000);

  afterAll(async () => {
    if (copy !== '') await rm(copy, { recursive: true, force: true });
  });

  test('builds nothing: every package of the build left its stamp', async () => {
    const before = await stamps(copy);
    const result = await run(process.execPath, ['scripts/build-stale.mjs'], { cwd: copy });
    expect(result.stderr).toBe('');
    expect(await stamps(copy)).toEqual(before);
  }, 60_000);

  test('a source saved after the build rebuilds its package and the packages that depend on it', async () => {
    const before = await stamps(copy);
    const source = path.join(copy, 'packages', 'sqlite', 'src', 'index.ts');
    // Saved now: after the build started, and before the rebuild below starts.
    const now = new Date();
    await utimes(source, now, now);
    await run(process.execPath, ['scripts/build-stale.mjs'], { cwd: copy });
    // The CLI depends on @youyou/sqlite; the server only in its tests.
    expect(rebuilt(before, await stamps(copy))).toEqual(['cli', 'sqlite']);
    const again = await stamps(copy);
    await run(process.execPath, ['scripts/build-stale.mjs'], { cwd: copy });
    expect(await stamps(copy)).toEqual(again);
  }, 120_000);
});
