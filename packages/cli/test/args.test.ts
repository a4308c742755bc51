import { describe, expect, test } from 'vitest';
import { DEFAULT_SESSION_LIMIT, parseCommandLine, UsageError } from '../src/config/args.js';

function usageError(argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`no usage error for ${argv.join(' ')}`);
}

describe('parseCommandLine', () => {
  test('no arguments is the interactive chat', () => {
    expect(parseCommandLine([])).toEqual({
      command: { type: 'chat', prompt: undefined, json: false, resume: undefined, latest: false },
      flags: { provider: undefined, model: undefined, baseURL: undefined, cwd: undefined, yes: false },
    });
  });

  test('-p with --json, flags and their short forms', () => {
    const parsed = parseCommandLine([
      '-p',
      'hi',
      '--json',
      '-m',
      'qwen3',
      '--provider',
      'openai',
      '-y',
      '--cwd',
      '/tmp',
    ]);
    expect(parsed.command).toEqual({
      type: 'chat',
      prompt: 'hi',
      json: true,
      resume: undefined,
      latest: false,
    });
    expect(parsed.flags).toEqual({
      provider: 'openai',
      model: 'qwen3',
      baseURL: undefined,
      cwd: '/tmp',
      yes: true,
    });
  });

  test('resume ID, --continue and sessions', () => {
    expect(parseCommandLine(['resume', 'abc', '-p', 'go']).command).toMatchObject({
      resume: 'abc',
      prompt: 'go',
    });
    expect(parseCommandLine(['-c']).command).toMatchObject({ type: 'chat', latest: true });
    expect(parseCommandLine(['sessions', '--search', 'pears', '--limit', '5']).command).toEqual({
      type: 'sessions',
      search: 'pears',
      limit: 5,
      json: false,
    });
    expect(parseCommandLine(['sessions']).command).toMatchObject({ limit: DEFAULT_SESSION_LIMIT });
  });

  test('resume ID --fork asks for a fork of that session; --fork alone is refused', () => {
    expect(parseCommandLine(['resume', 'abc', '--fork']).command).toMatchObject({
      resume: 'abc',
      fork: true,
    });
    expect(parseCommandLine(['resume', 'abc']).command).not.toHaveProperty('fork');
    expect(usageError(['--fork'])).toBe("--fork belongs to 'youyou resume ID'");
    expect(usageError(['-c', '--fork'])).toBe("--fork belongs to 'youyou resume ID'");
  });

  test('--help and --version win over everything else', () => {
    expect(parseCommandLine(['-p', 'x', '--help']).command).toEqual({ type: 'help' });
    expect(parseCommandLine(['--version']).command).toEqual({ type: 'version' });
  });

  test('mistakes are usage errors that say what is wrong', () => {
    expect(usageError(['--nope'])).toBe("unknown option '--nope'");
    expect(usageError(['-x'])).toBe("unknown option '-x'");
    expect(usageError(['--provider', 'ollama'])).toBe(
      "--provider must be one of openai, anthropic, compatible, got 'ollama'",
    );
    expect(usageError(['--json'])).toBe('--json needs -p (or the sessions command)');
    expect(usageError(['resume'])).toBe("'resume' takes one session id: youyou resume ID");
    expect(usageError(['resume', 'a', '--continue'])).toBe("'resume' and --continue cannot be combined");
    expect(usageError(['hello'])).toBe(`unknown command 'hello'; to send a prompt, use youyou -p "hello"`);
    expect(usageError(['--search', 'x'])).toBe("--search belongs to 'youyou sessions'");
    expect(usageError(['sessions', '--limit', '0'])).toBe(
      "--limit must be a whole number from 1 to 1000, got '0'",
    );
    expect(usageError(['-p', '  '])).toBe('-p needs a prompt');
    expect(usageError(['-p'])).toMatch(/argument missing/);
  });

  test("'acp' takes the shared flags and nothing of the chat's", () => {
    const parsed = parseCommandLine(['acp', '--yes', '--sandbox', 'read-only', '-m', 'qwen3']);
    expect(parsed.command).toEqual({ type: 'acp' });
    expect(parsed.flags).toMatchObject({ yes: true, sandbox: 'read-only', model: 'qwen3' });
    expect(usageError(['acp', 'extra'])).toBe("'acp' takes no arguments, got 'extra'");
    expect(usageError(['acp', '-p', 'hi'])).toBe("'acp' cannot be combined with -p, --continue or --json");
    expect(usageError(['acp', '--port', '1'])).toBe("--port and --host belong to 'youyou serve'");
  });
});

describe('youyou mcp', () => {
  test('login and logout take one server name', () => {
    expect(parseCommandLine(['mcp', 'login', 'github']).command).toEqual({
      type: 'mcp-login',
      server: 'github',
    });
    expect(parseCommandLine(['mcp', 'logout', 'github']).command).toEqual({
      type: 'mcp-logout',
      server: 'github',
    });
  });

  test('a missing or unknown subcommand, a missing name or a chat flag is a usage error', () => {
    expect(usageError(['mcp'])).toBe("'mcp' needs a subcommand: serve, login, logout");
    expect(usageError(['mcp', 'dance'])).toBe("unknown subcommand 'mcp dance'; one of serve, login, logout");
    expect(usageError(['mcp', 'login'])).toBe("'mcp login' takes one server name: youyou mcp login NAME");
    expect(usageError(['mcp', 'logout', 'a', 'b'])).toBe(
      "'mcp logout' takes one server name: youyou mcp logout NAME",
    );
    expect(usageError(['mcp', 'login', 'x', '-p', 'hi'])).toBe(
      "'mcp' cannot be combined with -p, --continue or --json",
    );
  });
});
