import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { textReply, toolCallReply, toolResult } from '../../../test-support/cli-wire.js';
import {
  type ApprovalRule,
  judgeByRules,
  offeredShellPrefix,
  parseRule,
  splitSimpleCommand,
} from '../src/rules.js';
import { runCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

function rule(text: string): ApprovalRule {
  const parsed = parseRule(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

function verdict(options: { allow?: string[]; deny?: string[]; tool?: string; args: unknown }) {
  return judgeByRules(
    { allow: (options.allow ?? []).map(rule), deny: (options.deny ?? []).map(rule) },
    options.tool ?? 'shell',
    options.args,
  )?.verdict;
}

describe('approval rules', () => {
  test('a shell prefix rule allows the command and its arguments, word by word', () => {
    const allow = ['shell(git status)', 'shell(npm test)'];
    expect(verdict({ allow, args: { command: 'git status' } })).toBe('allow');
    expect(verdict({ allow, args: { command: 'git   status --short' } })).toBe('allow');
    expect(verdict({ allow, args: { command: "npm test -- 'a b'" } })).toBe('allow');
    expect(verdict({ allow, args: { command: 'git statusx' } })).toBeUndefined();
    expect(verdict({ allow, args: { command: 'git push' } })).toBeUndefined();
  });

  test('compound commands, substitutions, redirections and line breaks never match a prefix rule', () => {
    const allow = ['shell(git status)'];
    for (const command of [
      'git status; rm -rf x',
      'git status && rm -rf x',
      'git status || rm -rf x',
      'git status | sh',
      'git status & rm -rf x',
      'git status $(rm -rf x)',
      'git status `rm -rf x`',
      'git status "$(rm -rf x)"',
      'git status $HOME',
      'git status > .git/config',
      'git status < /etc/passwd',
      'git status\nrm -rf x',
      'git status\\\nrm -rf x',
      "git status 'unbalanced",
      'git status (rm)',
    ]) {
      expect(verdict({ allow, args: { command } }), command).toBeUndefined();
      expect(splitSimpleCommand(command), command).toBeUndefined();
    }
  });

  test('deny rules win over allow rules and find the program anywhere in a compound command', () => {
    const allow = ['shell'];
    const deny = ['shell(rm)', 'shell(git push)'];
    expect(verdict({ allow, deny, args: { command: 'ls' } })).toBe('allow');
    expect(verdict({ allow, deny, args: { command: 'rm -rf x' } })).toBe('deny');
    expect(verdict({ allow, deny, args: { command: 'ls && rm -rf x' } })).toBe('deny');
    expect(verdict({ allow, deny, args: { command: 'echo $(rm -rf x)' } })).toBe('deny');
    expect(verdict({ allow, deny, args: { command: 'true; git push --force' } })).toBe('deny');
    expect(verdict({ allow, deny, args: { command: 'rmdir x' } })).toBe('allow');
  });

  test('other tools match a glob of their path; a path climbing out does not match', () => {
    const allow = ['write_file(src/**)', 'edit_file'];
    expect(verdict({ allow, tool: 'write_file', args: { path: 'src/a/b.ts' } })).toBe('allow');
    expect(verdict({ allow, tool: 'write_file', args: { path: 'src/../../etc/x' } })).toBeUndefined();
    expect(verdict({ allow, tool: 'write_file', args: { path: 'package.json' } })).toBeUndefined();
    expect(verdict({ allow, tool: 'edit_file', args: { path: 'anything' } })).toBe('allow');
    expect(verdict({ deny: ['read_file(*.env)'], tool: 'read_file', args: { path: 'prod.env' } })).toBe(
      'deny',
    );
  });

  test('a path rule is matched on the path the tool really touches as well: allow needs both, deny either', () => {
    const judge = (rules: { allow?: string[]; deny?: string[] }, touched: string) =>
      judgeByRules(
        { allow: (rules.allow ?? []).map(rule), deny: (rules.deny ?? []).map(rule) },
        'write_file',
        { path: 'src/up/.git/config' },
        touched,
      )?.verdict;
    expect(judge({ allow: ['write_file(src/**)'] }, 'src/up/.git/config')).toBe('allow');
    expect(judge({ allow: ['write_file(src/**)'] }, '.git/config')).toBeUndefined();
    expect(judge({ deny: ['write_file(.git/**)'] }, '.git/config')).toBe('deny');
    expect(judge({ deny: ['write_file(**/.git/**)'], allow: ['write_file'] }, 'src/up/.git/config')).toBe(
      'deny',
    );
  });

  test('the question offers the program and its subcommand, and nothing for a compound command', () => {
    expect(offeredShellPrefix('git status --short')).toBe('git status');
    expect(offeredShellPrefix('npm test')).toBe('npm test');
    expect(offeredShellPrefix('ls -la')).toBe('ls');
    expect(offeredShellPrefix('git status; rm -rf x')).toBeUndefined();
    expect(offeredShellPrefix('FOO=1 make')).toBeUndefined();
  });

  test('a malformed rule is refused with what to write', () => {
    expect(parseRule('shell(git status; rm)')).toMatch(/plain command prefix/);
    expect(parseRule('not a rule')).toMatch(/TOOL\(pattern\)/);
    expect(parseRule('shell()')).toMatch(/empty pattern/);
  });
});

describe('approval rules of config.json in youyou -p', () => {
  const harness = useCliHarness();

  async function writeConfig(config: unknown): Promise<void> {
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(path.join(harness.sandbox.home, 'config.json'), JSON.stringify(config));
  }

  function print(prompt: string, ...extra: string[]) {
    return runCli({
      args: ['-p', prompt, '--base-url', harness.server.baseURL, ...extra],
      sandbox: harness.sandbox,
    });
  }

  test('an allowed prefix runs without --yes; the same prefix with ; or && or $( ) does not', async () => {
    await writeConfig({ approval: { allow: ['shell(touch made)'] } });
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'shell', arguments: { command: 'touch made' } }),
      toolCallReply({ id: 'call_2', name: 'shell', arguments: { command: 'touch made; touch pwned1' } }),
      toolCallReply({ id: 'call_3', name: 'shell', arguments: { command: 'touch made && touch pwned2' } }),
      toolCallReply({ id: 'call_4', name: 'shell', arguments: { command: 'touch made $(touch pwned3)' } }),
      toolCallReply({ id: 'call_5', name: 'shell', arguments: { command: 'touch made > pwned4' } }),
      textReply('done'),
    );

    const result = await print('make files');

    expect(result.code).toBe(0);
    expect(existsSync(path.join(harness.sandbox.workspace, 'made'))).toBe(true);
    for (const name of ['pwned1', 'pwned2', 'pwned3', 'pwned4']) {
      expect(existsSync(path.join(harness.sandbox.workspace, name)), name).toBe(false);
    }
    const last = harness.server.turnRequests().at(-1)!;
    expect(toolResult(last, 'call_2')).toContain('--yes');
  });

  test('a deny rule wins over an allow rule and over --yes', async () => {
    await mkdir(path.join(harness.sandbox.workspace, 'keep'));
    await writeConfig({ approval: { allow: ['shell'], deny: ['shell(rm)'] } });
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'shell', arguments: { command: 'rm -rf keep' } }),
      toolCallReply({ id: 'call_2', name: 'shell', arguments: { command: 'true && rm -rf keep' } }),
      textReply('refused'),
    );

    const result = await print('clean up', '--yes');

    expect(result.code).toBe(0);
    expect(existsSync(path.join(harness.sandbox.workspace, 'keep'))).toBe(true);
    const last = harness.server.turnRequests().at(-1)!;
    expect(toolResult(last, 'call_1')).toContain('shell(rm)');
    expect(toolResult(last, 'call_2')).toContain('shell(rm)');
  });

  test('a malformed rule in config.json is a configuration error: exit code 2, nothing runs', async () => {
    await writeConfig({ approval: { allow: ['shell(git status; rm -rf x)'] } });

    const result = await print('anything');

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('approval.allow');
    expect(harness.server.turnRequests()).toHaveLength(0);
  });
});
