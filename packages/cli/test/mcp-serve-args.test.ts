import { expect, test } from 'vitest';
import { parseCommandLine, UsageError } from '../src/config/args.js';

test('mcp serve speaks stdio, or Streamable HTTP with --port (127.0.0.1 unless --host); --yes is a flag', () => {
  expect(parseCommandLine(['mcp', 'serve']).command).toEqual({ type: 'mcp-serve', host: '127.0.0.1' });
  const http = parseCommandLine(['mcp', 'serve', '--port', '0', '--host', '::1', '--yes']);
  expect(http.command).toEqual({ type: 'mcp-serve', port: 0, host: '::1' });
  expect(http.flags.yes).toBe(true);
});

test('mcp serve mistakes are usage errors', () => {
  for (const argv of [
    ['mcp'],
    ['mcp', 'bogus'],
    ['mcp', 'serve', 'now'],
    ['mcp', 'serve', '-p', 'hi'],
    ['mcp', 'serve', '--continue'],
    ['mcp', 'serve', '--json'],
    ['mcp', 'serve', '--host', '0.0.0.0'],
    ['mcp', 'serve', '--port', '70000'],
    ['mcp', 'serve', '--database-url', 'postgres://db/app'],
    ['mcp', 'serve', '--search', 'x'],
    ['--port', '9000'],
  ]) {
    expect(() => parseCommandLine(argv), argv.join(' ')).toThrow(UsageError);
  }
});
