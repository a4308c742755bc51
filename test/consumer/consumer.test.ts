/**
 * The packages as a stranger gets them: every public package packed with `npm pack`, the tarballs installed
 * with `npm install` in a project outside the repository (the registry for their dependencies, no workspace
 * links), a file using every entry point and the README's embedding example type-checked under `strict` with
 * `skipLibCheck: false` and run, and the installed `youyou` binary run against a scripted model server.
 * Run by `npm run test:consumer` (a step of .ci/run), not by `npm test`: the install builds better-sqlite3.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPOSITORY } from '../../scripts/build-package.mjs';
import { buildUnderLock } from '../../test-support/build-lock.js';
import { type ChatServer, messagesOf, startChatServer, textReply } from '../../test-support/cli-wire.js';
import { PUBLIC_PACKAGES, quickStart, readmeExample } from './packages.js';

const exec = promisify(execFile);
const FIXTURE = fileURLToPath(new URL('./fixture/', import.meta.url));

/** What `npm pack --json` says of one tarball. */
interface PackReport {
  name: string;
  filename: string;
  unpackedSize: number;
  files: { path: string }[];
}

/** The outcome of a child process, whether it exited with 0 or not. */
interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without the npm_* variables of an `npm run` that started this test. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.toLowerCase().startsWith('npm_')) env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command and resolves with how it ended (never rejects on a non-zero exit). */
async function outcome(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Outcome> {
  try {
    const result = await exec(file, args, { ...options, env: options.env ?? cleanEnv(), maxBuffer: 1 << 26 });
    return { code: 0, stdout: result.stdout, stderr: result.stderr };
  } catch (error) {
    const failure = error as { code?: unknown; stdout?: string; stderr?: string };
    const code = typeof failure.code === 'number' ? failure.code : -1;
    return { code, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}

/** The consumer's tsconfig: what a careful embedder sets, with every declaration file checked. */
const CONSUMER_TSCONFIG = {
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    skipLibCheck: false,
    types: ['node'],
    rootDir: 'src',
    outDir: 'dist',
  },
  include: ['src'],
};

describe('the packed packages, installed in a project outside the repository', () => {
  let root = '';
  let app = '';
  let packs: PackReport[] = [];
  let server: ChatServer | undefined;

  const tsc = () => outcome(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.'], { cwd: app });

  beforeAll(async () => {
    await buildUnderLock(PUBLIC_PACKAGES.map((entry) => entry.folder));
    root = await mkdtemp(path.join(tmpdir(), 'youyou-consumer-'));
    if (!path.relative(REPOSITORY, root).startsWith('..'))
      throw new Error(`${root} is inside the repository`);
    const tarballs = path.join(root, 'tarballs');
    app = path.join(root, 'app');
    await mkdir(tarballs);
    await mkdir(path.join(app, 'src'), { recursive: true });
    const workspaces = PUBLIC_PACKAGES.flatMap((entry) => ['-w', entry.name]);
    const packed = await exec('npm', ['pack', '--json', '--pack-destination', tarballs, ...workspaces], {
      cwd: REPOSITORY,
      env: cleanEnv(),
      maxBuffer: 1 << 26,
    });
    packs = JSON.parse(packed.stdout) as PackReport[];
    const manifest = {
      name: 'youyou-consumer',
      private: true,
      type: 'module',
      dependencies: Object.fromEntries(packs.map((pack) => [pack.name, `file:../tarballs/${pack.filename}`])),
      // The consumer's own tools, at the versions the repository's lockfile put in the npm cache.
      // @ai-sdk/openai-compatible: the AI SDK provider @youyou/ai-sdk's quick start wraps.
      devDependencies: {
        typescript: '7.0.2',
        '@types/node': '20.19.43',
        '@ai-sdk/openai-compatible': '2.0.92',
      },
      allowScripts: { 'better-sqlite3': true },
    };
    await writeFile(path.join(app, 'package.json'), JSON.stringify(manifest, null, 2));
    await writeFile(path.join(app, 'tsconfig.json'), JSON.stringify(CONSUMER_TSCONFIG, null, 2));
    await copyFile(path.join(FIXTURE, 'embedder.ts'), path.join(app, 'src', 'embedder.ts'));
    const readme = await readFile(path.join(REPOSITORY, 'README.md'), 'utf8');
    await writeFile(path.join(app, 'src', 'readme-example.ts'), readmeExample(readme));
    for (const entry of PUBLIC_PACKAGES) {
      const example = quickStart(
        await readFile(path.join(REPOSITORY, 'packages', entry.folder, 'README.md'), 'utf8'),
      );
      if (example !== undefined)
        await writeFile(path.join(app, 'src', `quick-start-${entry.folder}.ts`), example);
    }
    const installed = await outcome(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--strict-allow-scripts'],
      { cwd: app },
    );
    if (installed.code !== 0) throw new Error(`npm install failed:\n${installed.stdout}${installed.stderr}`);
  }, 900_000);

  afterAll(async () => {
    await server?.close();
    if (root !== '') await rm(root, { recursive: true, force: true });
  });

  test('every public package is packed, with its declarations and without tests or build stamps', () => {
    expect(packs.map((pack) => pack.name).sort()).toEqual(PUBLIC_PACKAGES.map((entry) => entry.name).sort());
    for (const pack of packs) {
      const files = pack.files.map((file) => file.path);
      expect(files).toContain('package.json');
      expect(files).toContain('README.md');
      expect(files).toContain('dist/index.d.ts');
      expect(files.filter((file) => /(^|\/)(test|tests)\/|\.test\.|\.build-stamp$/.test(file))).toEqual([]);
    }
  });

  test('one copy of each package is installed, from its tarball', async () => {
    const lock = JSON.parse(await readFile(path.join(app, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string }>;
    };
    for (const entry of PUBLIC_PACKAGES) {
      expect(lock.packages[`node_modules/${entry.name}`]?.resolved, entry.name).toMatch(
        /^file:\.\.\/tarballs\//,
      );
      const installed = JSON.parse(
        await readFile(path.join(app, 'node_modules', entry.name, 'package.json'), 'utf8'),
      ) as { name: string };
      expect(installed.name).toBe(entry.name);
      // No package got a second copy of another from the registry.
      for (const other of PUBLIC_PACKAGES) {
        const nested = path.join(app, 'node_modules', entry.name, 'node_modules', other.name);
        expect(await stat(nested).catch(() => undefined)).toBeUndefined();
      }
    }
  });

  test("every package's README has an install line and a quick start", async () => {
    for (const entry of PUBLIC_PACKAGES) {
      const readme = await readFile(path.join(REPOSITORY, 'packages', entry.folder, 'README.md'), 'utf8');
      expect(readme, entry.name).toMatch(new RegExp(`npm install [^\\n]*${entry.name}`));
      expect(readme, entry.name).toMatch(/^## Quick start$/m);
    }
    // Every TypeScript quick start is one of the files the next test type-checks.
    const written = PUBLIC_PACKAGES.filter((entry) => entry.folder !== 'cli').map(
      (entry) => `quick-start-${entry.folder}.ts`,
    );
    for (const file of written)
      expect(await stat(path.join(app, 'src', file)).catch(() => undefined), file).toBeDefined();
  });

  test('every entry point, the README example and the quick starts type-check under strict with skipLibCheck off', async () => {
    const result = await tsc();
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  test('the embedder runs a scripted turn with a tool call, saved in an SQLite file', async () => {
    const database = path.join(root, 'agent.db');
    const result = await outcome(process.execPath, ['dist/embedder.js', database], { cwd: app });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      exports: Record<string, number>;
      answer: string;
      savedEvents: number;
      journalMode: unknown;
    };
    for (const entry of PUBLIC_PACKAGES.flatMap((item) => item.entryPoints)) {
      expect(report.exports[entry], entry).toBeGreaterThan(0);
    }
    expect(report.answer).toBe('A wren is a small bird.');
    // The user's message, the tool call and its result, and the answer were read back from the file.
    expect(report.savedEvents).toBeGreaterThanOrEqual(4);
    expect(report.journalMode).toBe('wal');
    expect((await stat(database)).size).toBeGreaterThan(0);
  }, 60_000);

  test("@youyou/agent's quick start runs with no model server", async () => {
    const result = await outcome(process.execPath, ['dist/quick-start-agent.js'], { cwd: app });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Hello!');
  }, 60_000);

  test("the README's embedding example runs", async () => {
    const result = await outcome(process.execPath, ['dist/readme-example.js'], { cwd: app });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('It is noon.');
  }, 60_000);

  test('the installed youyou prints its version and answers -p from a scripted model server', async () => {
    const home = path.join(root, 'home');
    const workspace = path.join(root, 'workspace');
    await mkdir(workspace, { recursive: true });
    const env = {
      PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: home,
      YOUYOU_HOME: path.join(home, '.youyou'),
      SHELL: '/bin/sh',
    };
    const youyou = path.join(app, 'node_modules', '.bin', 'youyou');
    const version = await outcome(youyou, ['--version'], { cwd: workspace, env });
    const cliManifest = JSON.parse(
      await readFile(path.join(app, 'node_modules', '@youyou', 'cli', 'package.json'), 'utf8'),
    ) as { version: string };
    expect(version.stdout).toBe(`${cliManifest.version}\n`);
    expect(version.code).toBe(0);

    server = await startChatServer();
    server.reply(textReply('Hello from ', 'the scripted server.'));
    const turn = await outcome(youyou, ['-p', 'Say hello', '--base-url', server.baseURL], {
      cwd: workspace,
      env,
    });
    expect(turn.code).toBe(0);
    expect(turn.stdout).toContain('Hello from the scripted server.');
    const [request] = server.turnRequests();
    const user = messagesOf(request!).find((message) => message.role === 'user');
    expect(JSON.stringify(user?.content)).toContain('Say hello');
  }, 60_000);

  test('the check fails when a declaration names a type the consumer cannot resolve', async () => {
    // Without @types/better-sqlite3, @youyou/sqlite's declarations name a module without types.
    const types = path.join(app, 'node_modules', '@types', 'better-sqlite3');
    const aside = path.join(root, 'better-sqlite3-types');
    await rename(types, aside);
    try {
      const result = await tsc();
      expect(result.code).not.toBe(0);
      expect(result.stdout).toContain('node_modules/@youyou/sqlite/dist/');
    } finally {
      await rename(aside, types);
    }
  }, 120_000);
});
