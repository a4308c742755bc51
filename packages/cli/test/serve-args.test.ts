import { expect, test } from 'vitest';
import { DEFAULT_SERVE_PORT, parseCommandLine, UsageError } from '../src/config/args.js';
import { parseServerConfig, tokensFromEnv } from '../src/config/server.js';
import { ConfigError } from '../src/config/values.js';
import { databaseTarget, redacted } from '../src/modes/serve/database.js';

test('serve takes --port and --host, with 127.0.0.1 and the default port otherwise', () => {
  expect(parseCommandLine(['serve']).command).toEqual({
    type: 'serve',
    port: DEFAULT_SERVE_PORT,
    host: '127.0.0.1',
  });
  expect(parseCommandLine(['serve', '--port', '9000', '--host', '0.0.0.0']).command).toEqual({
    type: 'serve',
    port: 9000,
    host: '0.0.0.0',
  });
});

test('a bad port, extra arguments and --port outside serve are usage errors', () => {
  for (const argv of [
    ['serve', '--port', '70000'],
    ['serve', '--port', 'abc'],
    ['serve', 'now'],
    ['serve', '-p', 'hi'],
    ['--port', '9000'],
  ]) {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
  }
});

test('server.tokens and YOUYOU_SERVER_TOKENS map tokens to tenants; short tokens and bad tenants are refused', () => {
  expect(parseServerConfig('config.json', { tokens: { 'a-long-token-0123456789': 'team-a' } })).toEqual({
    tokens: { 'a-long-token-0123456789': 'team-a' },
  });
  expect(tokensFromEnv('first-token-0123456789=a, second-token-012345678=b')).toEqual({
    'first-token-0123456789': 'a',
    'second-token-012345678': 'b',
  });
  expect(tokensFromEnv(undefined)).toEqual({});
  expect(() => parseServerConfig('config.json', { tokens: { short: 'a' } })).toThrow(ConfigError);
  expect(() =>
    parseServerConfig('config.json', { tokens: { 'a-long-token-0123456789': 'bad tenant' } }),
  ).toThrow(ConfigError);
  expect(() => parseServerConfig('config.json', { port: 1 })).toThrow(ConfigError);
  expect(() => tokensFromEnv('no-separator')).toThrow(ConfigError);
  // A message never quotes the token itself.
  try {
    parseServerConfig('config.json', { tokens: { 'short-secret': 'a' } });
  } catch (error) {
    expect((error as Error).message).not.toContain('short-secret');
  }
});

test('serve takes --database-url and --no-web-chat; outside serve they are usage errors', () => {
  expect(
    parseCommandLine(['serve', '--database-url', 'postgres://u:p@db:5432/app', '--no-web-chat']).command,
  ).toEqual({
    type: 'serve',
    port: DEFAULT_SERVE_PORT,
    host: '127.0.0.1',
    databaseUrl: 'postgres://u:p@db:5432/app',
    webChat: false,
  });
  for (const argv of [
    ['--database-url', 'postgres://u:p@db/app'],
    ['sessions', '--database-url', 'postgres://u:p@db/app'],
    ['--no-web-chat'],
    ['serve', '--database-url', ' '],
  ]) {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
  }
  // A usage error never quotes the URL: it may hold a password.
  try {
    parseCommandLine(['-p', 'hi', '--database-url', 'postgres://u:hunter2-secret@db/app']);
  } catch (error) {
    expect((error as Error).message).not.toContain('hunter2-secret');
  }
});

test('server.databaseUrl, databaseSchema and webChat are checked; a bad URL is refused without quoting it', () => {
  expect(
    parseServerConfig('config.json', {
      databaseUrl: 'postgres://u:p@db/app',
      databaseSchema: 'youyou_app',
      webChat: false,
      idleSessionMs: 5_000,
      approvalWindowMs: 3_600_000,
    }),
  ).toEqual({
    databaseUrl: 'postgres://u:p@db/app',
    databaseSchema: 'youyou_app',
    webChat: false,
    idleSessionMs: 5_000,
    approvalWindowMs: 3_600_000,
  });
  for (const server of [
    { databaseUrl: 5 },
    { databaseUrl: '' },
    { databaseSchema: 'bad-schema; drop' },
    { webChat: 'no' },
    { idleSessionMs: 10 },
    { idleSessionMs: 1.5 },
    { approvalWindowMs: 10 },
    { approvalWindowMs: '1h' },
  ]) {
    expect(() => parseServerConfig('config.json', server)).toThrow(ConfigError);
  }
  const target = databaseTarget('postgresql://app:s%40cret-pw@db.internal:6432/chat', 'server.databaseUrl');
  expect(target.where).toBe('db.internal:6432/chat');
  expect(redacted('failed for postgresql://app:s%40cret-pw@db.internal:6432/chat', target)).toBe(
    'failed for ***',
  );
  expect(redacted('password s@cret-pw or s%40cret-pw', target)).toBe('password *** or ***');
  for (const bad of ['db.internal/chat', 'mysql://app:s3cret-pw@db/chat', 'postgres://app:%zz@db/chat']) {
    try {
      databaseTarget(bad, '--database-url');
      expect.unreachable(`${bad} was accepted`);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('s3cret-pw');
      expect((error as Error).message).toContain('--database-url');
    }
  }
});

test('server.workspaces is "tenant", "session" or "shared"; server.workspaceRoot a folder path', () => {
  expect(parseServerConfig('config.json', { workspaces: 'session', workspaceRoot: 'files' })).toEqual({
    workspaces: 'session',
    workspaceRoot: 'files',
  });
  for (const workspaces of ['tenants', true, '']) {
    expect(() => parseServerConfig('config.json', { workspaces })).toThrow(ConfigError);
  }
  for (const workspaceRoot of ['', ' ', 'a\u0000b', 7]) {
    expect(() => parseServerConfig('config.json', { workspaceRoot })).toThrow(ConfigError);
  }
});

test('server.journalRetentionMs is taken in whole milliseconds from 1000 to 86400000', () => {
  expect(parseServerConfig('config.json', { journalRetentionMs: 5_000 })).toEqual({
    journalRetentionMs: 5_000,
  });
  for (const bad of [999, 86_400_001, 1.5, '5000', null]) {
    expect(() => parseServerConfig('config.json', { journalRetentionMs: bad })).toThrow(ConfigError);
  }
});

test('server.journalMaxBytes is taken in whole bytes from 0 to 16 GiB', () => {
  expect(parseServerConfig('config.json', { journalMaxBytes: 8_388_608 })).toEqual({
    journalMaxBytes: 8_388_608,
  });
  expect(parseServerConfig('config.json', { journalMaxBytes: 0 })).toEqual({ journalMaxBytes: 0 });
  for (const bad of [-1, 16 * 2 ** 30 + 1, 1.5, '1000', null]) {
    expect(() => parseServerConfig('config.json', { journalMaxBytes: bad })).toThrow(ConfigError);
  }
});
