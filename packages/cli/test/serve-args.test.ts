import { expect, test } from 'vitest';
import { DEFAULT_SERVE_PORT, parseCommandLine, UsageError } from '../src/args.js';
import { ConfigError } from '../src/config-values.js';
import { parseServerConfig, tokensFromEnv } from '../src/server-config.js';

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
