import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { FlagSettings } from '../src/config/args.js';
import { ConfigError, resolveSettings } from '../src/config/config.js';
import { validateFileConfig } from '../src/config/schema.js';

let home: string;
const noFlags: FlagSettings = {
  provider: undefined,
  model: undefined,
  baseURL: undefined,
  cwd: undefined,
  yes: false,
};

beforeEach(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'youyou-config-'));
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function withFile(config: unknown): Promise<void> {
  await mkdir(home, { recursive: true });
  await writeFile(
    path.join(home, 'config.json'),
    typeof config === 'string' ? config : JSON.stringify(config),
  );
}

function resolve(
  options: { flags?: Partial<FlagSettings>; env?: NodeJS.ProcessEnv; warnings?: string[] } = {},
) {
  return resolveSettings({
    flags: { ...noFlags, ...options.flags },
    env: { YOUYOU_HOME: home, ...options.env },
    warn: (text) => options.warnings?.push(text),
  });
}

describe('resolveSettings', () => {
  test('with nothing configured: a compatible server (Ollama) in the current folder, data under YOUYOU_HOME', () => {
    const settings = resolve();
    expect(settings).toMatchObject({
      provider: 'compatible',
      model: undefined,
      baseURL: undefined,
      home,
      databasePath: path.join(home, 'youyou.db'),
      historyPath: path.join(home, 'history'),
      cwd: process.cwd(),
      yes: false,
    });
  });

  test('flags beat the environment, which beats the config file', async () => {
    await withFile({ provider: 'compatible', model: 'file-model', baseUrl: 'http://file:1/v1' });
    expect(resolve()).toMatchObject({ model: 'file-model', baseURL: 'http://file:1/v1' });
    expect(resolve({ env: { YOUYOU_MODEL: 'env-model' } })).toMatchObject({ model: 'env-model' });
    expect(resolve({ env: { YOUYOU_MODEL: 'env-model' }, flags: { model: 'flag-model' } })).toMatchObject({
      model: 'flag-model',
      baseURL: 'http://file:1/v1',
    });
  });

  test('a provider chosen above a layer does not take that layer’s model, URL or key for another provider', async () => {
    await withFile({
      provider: 'compatible',
      model: 'llama3.2',
      baseUrl: 'http://file:1/v1',
      apiKey: 'file-key',
    });
    const settings = resolve({ flags: { provider: 'openai' }, env: { OPENAI_API_KEY: 'sk-env' } });
    expect(settings).toMatchObject({
      provider: 'openai',
      model: undefined,
      baseURL: undefined,
      apiKey: 'sk-env',
    });
  });

  test('API keys come from the provider’s variable', () => {
    const env = { OPENAI_API_KEY: 'sk-o', ANTHROPIC_API_KEY: 'sk-a', YOUYOU_API_KEY: 'sk-y' };
    expect(resolve({ flags: { provider: 'openai' }, env }).apiKey).toBe('sk-o');
    expect(resolve({ flags: { provider: 'anthropic' }, env }).apiKey).toBe('sk-a');
    expect(resolve({ env }).apiKey).toBe('sk-y');
  });

  test('--cwd must be a folder', () => {
    expect(() => resolve({ flags: { cwd: path.join(home, 'missing') } })).toThrow(ConfigError);
    expect(resolve({ flags: { cwd: home } }).cwd).toBe(home);
  });

  test('a config file that is not JSON is named', async () => {
    await withFile('{ provider: ');
    expect(() => resolve()).toThrow(new RegExp(`^${path.join(home, 'config.json')} is not valid JSON`));
  });

  test('bad environment values are named', () => {
    expect(() => resolve({ env: { YOUYOU_PROVIDER: 'ollama' } })).toThrow(
      "YOUYOU_PROVIDER must be one of openai, anthropic, compatible, got 'ollama'",
    );
    expect(() => resolve({ flags: { baseURL: 'localhost:11434' } })).toThrow(/--base-url/);
  });
});

describe('validateFileConfig', () => {
  const check = (data: unknown, warnings: string[] = []) =>
    validateFileConfig({ file: 'config.json', data, warn: (text) => warnings.push(text) });

  test('MCP servers: a command or a URL', () => {
    expect(
      check({
        mcpServers: {
          files: { command: 'npx', args: ['-y', 'server'], env: { TOKEN: 'x' } },
          web: { url: 'http://127.0.0.1:3000/mcp' },
        },
      }).mcpServers,
    ).toEqual({
      files: { command: 'npx', args: ['-y', 'server'], env: { TOKEN: 'x' } },
      web: { url: 'http://127.0.0.1:3000/mcp' },
    });
    expect(() => check({ mcpServers: { bad: { args: [] } } })).toThrow(
      'config.json: mcpServers.bad needs "command" (a program to start) or "url" (a Streamable HTTP endpoint)',
    );
    expect(() => check({ mcpServers: { bad: { command: 'x', args: 'y' } } })).toThrow('mcpServers.bad.args');
  });

  test('wrong types are named; unknown keys are warnings', () => {
    expect(() => check({ contextWindow: 'big' })).toThrow(
      'config.json: "contextWindow" must be a whole number',
    );
    expect(() => check({ systemInstructions: 'be nice' })).toThrow('"systemInstructions" must be an array');
    expect(() => check([])).toThrow('config.json must hold a JSON object');
    const warnings: string[] = [];
    expect(check({ modle: 'x' }, warnings)).toEqual({});
    expect(warnings[0]).toMatch(/^config.json: unknown key "modle" ignored/);
  });

  test('approval rules: allow and deny lists of TOOL or TOOL(pattern); anything else is refused', () => {
    expect(
      check({ approval: { allow: ['shell(git status)', 'edit_file'], deny: ['shell(rm)'] } }).approval,
    ).toEqual({
      allow: [
        { tool: 'shell', pattern: 'git status', text: 'shell(git status)' },
        { tool: 'edit_file', text: 'edit_file' },
      ],
      deny: [{ tool: 'shell', pattern: 'rm', text: 'shell(rm)' }],
    });
    expect(() => check({ approval: { allow: 'shell' } })).toThrow(ConfigError);
    expect(() => check({ approval: { allow: ['shell(a && b)'] } })).toThrow(/approval\.allow/);
    expect(() => check({ approval: { permit: [] } })).toThrow(/approval\.permit/);
    expect(check({ approval: { quietMs: 2500 } }).approvalQuietMs).toBe(2500);
    for (const quietMs of [-1, 1.5, '800', 10_001]) {
      expect(() => check({ approval: { quietMs } })).toThrow(/approval\.quietMs/);
    }
  });
});
