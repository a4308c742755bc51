import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parseCommandLine, UsageError } from '../src/config/args.js';
import { ConfigError, resolveSettings } from '../src/config/config.js';
import { DEFAULT_RESOURCE_LIMITS, prlimitOptions } from '../src/sandbox/limits.js';
import { bubblewrapArguments, SECRET_HOME_PATHS } from '../src/sandbox/sandbox.js';
import { isSecretName, toolEnvironment } from '../src/sandbox/tool-env.js';

let base: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'youyou-sandbox-config-')));
});

afterEach(() => rm(base, { recursive: true, force: true }));

function settingsWith(options: { argv?: string[]; config?: unknown }) {
  const home = path.join(base, 'youyou');
  return (async () => {
    await mkdir(home, { recursive: true });
    if (options.config !== undefined) {
      await writeFile(path.join(home, 'config.json'), JSON.stringify(options.config));
    }
    return resolveSettings({
      flags: parseCommandLine(options.argv ?? []).flags,
      env: { YOUYOU_HOME: home, HOME: path.join(base, 'user') },
      warn: () => undefined,
    });
  })();
}

describe('sandbox settings', () => {
  test('workspace-write without network by default; the credential folders of HOME and YOUYOU_HOME hidden', async () => {
    const settings = await settingsWith({});
    expect(settings.sandbox).toMatchObject({
      mode: 'workspace-write',
      network: false,
      allowUnconfined: false,
      bwrapPath: 'bwrap',
    });
    expect(settings.sandbox.hiddenPaths).toContain(path.join(base, 'user', '.ssh'));
    expect(settings.sandbox.hiddenPaths).toContain(path.join(base, 'user', '.config', 'gcloud'));
    expect(settings.sandbox.hiddenPaths).toContain(path.join(base, 'youyou'));
    expect(settings.passEnv).toEqual([]);
  });

  test('--sandbox and --allow-network beat the config file', async () => {
    const settings = await settingsWith({
      argv: ['--sandbox', 'read-only', '--allow-network'],
      config: { sandbox: { mode: 'danger-full-access', network: false } },
    });
    expect(settings.sandbox).toMatchObject({ mode: 'read-only', network: true });
  });

  test('the config file sets the mode, the network, the fallback, bwrap and more hidden paths', async () => {
    const settings = await settingsWith({
      config: {
        sandbox: {
          mode: 'read-only',
          network: true,
          allowUnconfined: true,
          bwrapPath: '/opt/bwrap',
          hiddenPaths: ['~/.secrets', '/srv/keys'],
        },
        passEnv: ['JAVA_HOME'],
      },
    });
    expect(settings.sandbox).toMatchObject({
      mode: 'read-only',
      network: true,
      allowUnconfined: true,
      bwrapPath: '/opt/bwrap',
    });
    expect(settings.sandbox.hiddenPaths).toContain(path.join(base, 'user', '.secrets'));
    expect(settings.sandbox.hiddenPaths).toContain('/srv/keys');
    expect(settings.passEnv).toEqual(['JAVA_HOME']);
  });

  test('a bad mode is a usage error or a config error', async () => {
    expect(() => parseCommandLine(['--sandbox', 'none'])).toThrow(UsageError);
    await expect(settingsWith({ config: { sandbox: { mode: 'off' } } })).rejects.toThrow(ConfigError);
    await expect(settingsWith({ config: { sandbox: { network: 'yes' } } })).rejects.toThrow(ConfigError);
    await expect(settingsWith({ config: { sandbox: { hidden: [] } } })).rejects.toThrow(/sandbox\.hidden/);
    await expect(settingsWith({ config: { passEnv: ['A B'] } })).rejects.toThrow(/passEnv/);
  });
});

describe('the environment of tools', () => {
  test('only the allowlist and the names passed, never a secret-looking or provider name', () => {
    const env = toolEnvironment({
      env: {
        PATH: '/bin',
        HOME: '/home/u',
        LC_ALL: 'C',
        DATABASE_URL: 'postgres://u:p@h/db',
        ANTHROPIC_API_KEY: 'k',
        OPENAI_BASE_URL: 'u',
        FOO_TOKEN: 't',
        MY_PASSWORD: 'p',
        JAVA_HOME: '/opt/java',
        GIT_AUTHOR_NAME: 'Ann',
        NPM_CONFIG_USERCONFIG: '/x',
      },
      pass: ['JAVA_HOME', 'FOO_TOKEN', 'GIT_AUTHOR_NAME', 'NPM_CONFIG_USERCONFIG'],
    });
    expect(env).toEqual({
      PATH: '/bin',
      HOME: '/home/u',
      LC_ALL: 'C',
      JAVA_HOME: '/opt/java',
      GIT_AUTHOR_NAME: 'Ann',
    });
    for (const name of ['AWS_SECRET_ACCESS_KEY', 'GH_TOKEN', 'X_AUTH', 'AUTH_HEADER', 'SECRET', 'Api_Key']) {
      expect(isSecretName(name)).toBe(true);
    }
  });
});

describe('bubblewrapArguments', () => {
  test('the workspace is bound after the private /tmp, over an empty read-only top folder; secrets after it', async () => {
    const workspace = path.join(base, 'project');
    const inside = path.join(workspace, '.ssh');
    await mkdir(inside, { recursive: true });
    await writeFile(path.join(base, 'netrc'), '');
    const args = bubblewrapArguments({
      sandbox: {
        mode: 'workspace-write',
        network: false,
        bwrapPath: 'bwrap',
        hiddenPaths: [inside, path.join(base, 'netrc'), base, path.join(base, 'missing')],
      },
      workspaceRoot: workspace,
    });
    const text = args.join(' ');
    expect(args).not.toContain('--share-net');
    expect(text).toContain('--cap-drop ALL');
    expect(text).toContain('--tmpfs /run');
    const top = path.join('/tmp', path.relative(tmpdir(), base).split(path.sep)[0]!);
    if (base.startsWith('/tmp/')) {
      // Nothing of the host's /tmp shows: the top folder is an empty tmpfs, read-only once the workspace is in.
      expect(text).not.toContain(`--ro-bind ${top} ${top}`);
      expect(text.indexOf(`--tmpfs ${top} `)).toBeLessThan(text.indexOf(`--bind ${workspace}`));
      expect(text.indexOf(`--remount-ro ${top} `)).toBeGreaterThan(text.indexOf(`--bind ${workspace}`));
      // A hidden file beside the workspace in /tmp is not visible at all: nothing to hide.
      expect(text).not.toContain(path.join(base, 'netrc'));
    }
    expect(text.indexOf(`--bind ${workspace} ${workspace}`)).toBeGreaterThan(text.indexOf('--tmpfs /tmp'));
    expect(text.indexOf(`--tmpfs ${inside}`)).toBeGreaterThan(text.indexOf(`--bind ${workspace}`));
    // A hidden path holding the workspace is not hidden (as the top folder in /tmp, it is the one empty tmpfs
    // the workspace is bound into); a missing one is skipped.
    expect(text.split(`--tmpfs ${base} `).length).toBe(base === top ? 2 : 1);
    expect(text).not.toContain('missing');
    expect(SECRET_HOME_PATHS).toContain('.ssh');
  });

  test('a hidden folder holding the workspace outside the private folders is emptied, then the workspace bound into it', async () => {
    // /var/tmp is not one of the private folders: what the hidden folder holds besides the workspace would show.
    const holder = await realpath(await mkdtemp(path.join('/var/tmp', 'youyou-holder-')));
    try {
      const workspace = path.join(holder, 'alice');
      await mkdir(workspace);
      const args = bubblewrapArguments({
        sandbox: { mode: 'workspace-write', network: false, bwrapPath: 'bwrap', hiddenPaths: [holder] },
        workspaceRoot: workspace,
      });
      const text = args.join(' ');
      const bound = text.indexOf(`--bind ${workspace} ${workspace}`);
      expect(text.indexOf(`--tmpfs ${holder} `)).toBeGreaterThan(-1);
      expect(text.indexOf(`--tmpfs ${holder} `)).toBeLessThan(bound);
      expect(text.indexOf(`--remount-ro ${holder} `)).toBeGreaterThan(bound);
    } finally {
      await rm(holder, { recursive: true, force: true });
    }
  });

  test('read-only binds the workspace read-only; network opens with --share-net', () => {
    const args = bubblewrapArguments({
      sandbox: { mode: 'read-only', network: true, bwrapPath: 'bwrap', hiddenPaths: [] },
      workspaceRoot: base,
    }).join(' ');
    expect(args).toContain(`--ro-bind ${base} ${base}`);
    expect(args).not.toContain(`--bind ${base}`);
    expect(args).toContain('--share-net');
    // With the network on, /run (name resolution) stays.
    expect(args).not.toMatch(/--tmpfs \/run /);
  });

  test('sandbox.limits: defaults, overrides, null turns one off, and bad values are one clear error', async () => {
    const defaults = await settingsWith({ config: {} });
    expect(defaults.sandbox.limits).toEqual(DEFAULT_RESOURCE_LIMITS);
    const chosen = await settingsWith({
      config: { sandbox: { limits: { fileSizeBytes: 4096, cpuSeconds: null } } },
    });
    expect(chosen.sandbox.limits).toEqual({ fileSizeBytes: 4096, processes: 1024, cpuSeconds: null });
    await expect(settingsWith({ config: { sandbox: { limits: { processes: 0 } } } })).rejects.toThrow(
      /sandbox\.limits\.processes/,
    );
    await expect(settingsWith({ config: { sandbox: { limits: { files: 3 } } } })).rejects.toThrow(
      /sandbox\.limits\.files/,
    );
    await expect(settingsWith({ config: { sandbox: { limits: 5 } } })).rejects.toThrow(ConfigError);
    expect(prlimitOptions({ fileSizeBytes: 10, processes: null, cpuSeconds: 2 })).toEqual([
      '--fsize=10',
      '--cpu=2:3',
    ]);
  });
});
