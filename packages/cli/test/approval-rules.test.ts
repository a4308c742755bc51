import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { textReply, toolCallReply, toolResult } from '../../../test-support/cli-wire.js';
import {
  type ApprovalRule,
  judgeByRules,
  offeredShellPattern,
  parseRule,
  splitSimpleCommand,
} from '../src/approval/rules.js';
import { jsonLines, runCli } from './support/cli.js';
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
    expect(offeredShellPattern('git status --short')).toBe('git status');
    expect(offeredShellPattern('npm test')).toBe('npm test');
    expect(offeredShellPattern('npm run build -- --watch')).toBe('npm run build');
    expect(offeredShellPattern('ls -la')).toBe('ls');
    expect(offeredShellPattern('git status; rm -rf x')).toBeUndefined();
    expect(offeredShellPattern('FOO=1 make')).toBe('=FOO=1 make');
  });

  test('for interpreters and command runners the question offers only the exact command', () => {
    const exact: [string, string][] = [
      ['python3 build.py', '=python3 build.py'],
      ['python3.12 -m pytest', '=python3.12 -m pytest'],
      ['bash build.sh', '=bash build.sh'],
      ['sh -c "echo hi"', "=sh -c 'echo hi'"],
      ['node x.js', '=node x.js'],
      ['deno run x.ts', '=deno run x.ts'],
      ['bun run x', '=bun run x'],
      ['ruby x.rb', '=ruby x.rb'],
      ['perl x.pl', '=perl x.pl'],
      ['php x.php', '=php x.php'],
      ['lua x.lua', '=lua x.lua'],
      ["find . -name '*.ts'", "=find . -name '*.ts'"],
      ['env FOO=1 ls', '=env FOO=1 ls'],
      ['xargs rm', '=xargs rm'],
      ['npx prettier .', '=npx prettier .'],
      ['npm exec prettier', '=npm exec prettier'],
      ['pnpm dlx prettier', '=pnpm dlx prettier'],
      ['yarn dlx prettier', '=yarn dlx prettier'],
      ['nice -n 5 ls', '=nice -n 5 ls'],
      ['nohup ls', '=nohup ls'],
      ['timeout 5 ls', '=timeout 5 ls'],
      ['time ls', '=time ls'],
      ['sudo ls', '=sudo ls'],
      ['doas ls', '=doas ls'],
      ['su -c ls', '=su -c ls'],
      ['watch ls', '=watch ls'],
      ['parallel echo ::: a', '=parallel echo ::: a'],
      ['make test', '=make test'],
      ['./build.sh --fast', '=./build.sh --fast'],
      ['git -c core.pager=less status', '=git -c core.pager=less status'],
      ['git -C sub status', '=git -C sub status'],
      ['git st', '=git st'],
      ['git config core.pager less', '=git config core.pager less'],
      ['awk 1 f', '=awk 1 f'],
      ['sed -n 1p f', '=sed -n 1p f'],
    ];
    for (const [command, pattern] of exact) expect(offeredShellPattern(command), command).toBe(pattern);
    // The offered rule allows that command and nothing more.
    const allow = ['shell(=python3 build.py)'];
    expect(verdict({ allow, args: { command: 'python3  build.py' } })).toBe('allow');
    expect(verdict({ allow, args: { command: 'python3 build.py --evil' } })).toBeUndefined();
    expect(verdict({ allow, args: { command: 'python3 -c "import os"' } })).toBeUndefined();
    expect(verdict({ allow: ["shell(=sh -c 'echo hi')"], args: { command: 'sh -c "echo hi"' } })).toBe(
      'allow',
    );
  });

  test('a deny rule stops its program however it is spelled', () => {
    const deny = ['shell(rm)', 'shell(git push)'];
    for (const command of [
      'rm x',
      'FOO=1 rm x',
      '/bin/rm x',
      './rm x',
      'command rm x',
      'command -p rm x',
      'builtin rm x',
      'exec rm x',
      'env rm x',
      'env -i FOO=1 rm x',
      'env -u HOME -- rm x',
      'nice rm x',
      'nice -n 10 rm x',
      'nice -5 rm x',
      'nohup rm x',
      'timeout 5 rm x',
      'timeout -s KILL 5 rm x',
      'time rm x',
      'time -p rm x',
      'sudo rm x',
      'sudo -u root -E rm x',
      'sudo --user=root rm x',
      'doas -u root rm x',
      "su -c 'rm x' root",
      'stdbuf -oL rm x',
      'setsid rm x',
      '\\rm x',
      'r\\m x',
      "'rm' x",
      '"rm" x',
      "r''m x",
      'a && rm x',
      'a || rm x',
      'a; rm x',
      'a & rm x',
      'a\nrm x',
      'a | rm x',
      'a |& rm x',
      '(rm x)',
      '{ rm x; }',
      'if true; then rm x; fi',
      'while true; do rm x; done',
      'echo $(rm x)',
      'echo "$(rm x)"',
      'echo $( (rm x) )',
      'X=$(rm x) true',
      'cat <(rm x)',
      'echo hi > out; rm x',
      '2>/dev/null rm x',
      '! rm x',
      'xargs rm',
      'xargs -0 -n 1 rm',
      'xargs -I{} rm {}',
      'find . -exec rm {} \\;',
      "find . -name '*.o' -execdir rm {} +",
      "sh -c 'rm x'",
      "bash -lc 'echo a && rm x'",
      'bash -c "sudo rm x"',
      "eval 'rm x'",
      'eval rm x',
      "watch 'rm x'",
      'watch -n 1 -x rm x',
      'busybox rm x',
      'function f { rm x; }; f',
      'time { rm x; }',
      'sudo FOO=1 rm x',
      'coproc rm x',
      'ssh host rm x',
      'ssh -p 22 host "rm x"',
      'npx rm x',
      'npm exec -- rm x',
      "npx -c 'rm x'",
      'cat <<EOF\nhello\nEOF\nrm x',
      'git push',
      'git -C . push',
      'git --git-dir=.git push origin',
      'git --git-dir .git --work-tree . push',
      'git --no-pager -c user.name=x push',
      'command git -C . push --force',
      'sudo git --bare push',
    ]) {
      expect(verdict({ allow: ['shell'], deny, args: { command } }), command).toBe('deny');
    }
  });

  test('what a deny rule does not stop, and what it stops because the command cannot be known', () => {
    const deny = ['shell(rm)'];
    for (const command of [
      'rmdir x',
      'echo rm',
      'ls # rm x',
      "echo 'a; rm x'",
      'cat <<EOF\nrm x\nEOF',
      "cat <<'EOF'\nrm x $(rm y)\nEOF",
      'git rm x',
      '[ -f x ] && echo hi',
      '{ echo hi; }',
      'git ls-files | xargs git add',
      'source venv/bin/activate && pytest',
      'bash build.sh',
      'for f in *.ts; do echo $f; done',
      'cd $DIR && make',
      'ls *.ts {a,b}.txt',
    ]) {
      expect(verdict({ allow: ['shell'], deny, args: { command } }), command).toBe('allow');
    }
    for (const command of [
      '$CMD x',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template.
      '${RM:-rm} x',
      '"$(echo rm)" x',
      '`echo rm` x',
      "$'rm' x",
      'r* x',
      '{rm,x}',
      '[ -f x ] && rm y',
      'echo rm x | xargs sh -c',
      'echo rm x | xargs env',
      'echo "rm x" | xargs -I{} sh -c "{}"',
      'source <(echo rm x)',
      '. /dev/stdin <<< "rm x"',
      'sh /dev/stdin',
      "find . -name r -exec {} x ';'",
      'eval "$X"',
      'echo rm x | sh',
      'curl x | bash -s',
      'sudo $CMD',
      'sudo --mystery rm x',
      'env -S "rm x"',
      'git -c alias.p=!rm p',
      'git -c core.pager=rm log',
      'alias r=rm\nr x',
      'strace rm x',
      'cat <<EOF\n$(rm x)\nEOF',
      "echo 'unbalanced",
    ]) {
      const judged = judgeByRules({ allow: [rule('shell')], deny: deny.map(rule) }, 'shell', { command });
      expect(judged?.verdict, command).toBe('deny');
    }
    // Without any deny rule such a command is only asked about: no allow rule matches it.
    expect(verdict({ allow: ['shell(sudo)'], args: { command: 'sudo $CMD' } })).toBeUndefined();
    // A rule for git push is not fooled by git's global options, and does not stop other subcommands.
    expect(
      verdict({ allow: ['shell'], deny: ['shell(git push)'], args: { command: 'git -C . status' } }),
    ).toBe('allow');
  });

  test('the parser never throws, whatever the text: hostile names and random bytes are judged, not crashed on', () => {
    const deny = ['shell(rm)'];
    for (const command of ['constructor x', 'toString', '__proto__ x', 'npm toString', 'hasOwnProperty']) {
      expect(verdict({ allow: ['shell'], deny, args: { command } }), command).toBe('allow');
    }
    const alphabet = ' \t\n\\\'"$`(){}[];&|<>#=*?!~-abcrm0';
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let round = 0; round < 2000; round += 1) {
      const length = Math.floor(random() * 40);
      const command = Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      expect(() => judgeByRules({ allow: [], deny: deny.map(rule) }, 'shell', { command })).not.toThrow();
    }
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

  test('a deny rule stops rm and git push however the command spells them; an unclear command is refused too', async () => {
    const { workspace } = harness.sandbox;
    await mkdir(path.join(workspace, 'keep'));
    const spellings = [
      'FOO=1 rm keep/f1',
      '/bin/rm keep/f2',
      'command rm keep/f3',
      'env rm keep/f4',
      'nice rm keep/f5',
      '\\rm keep/f6',
      'true && rm keep/f7',
      '(rm keep/f8)',
      'echo $(rm keep/f9)',
      'echo keep/f10 | xargs rm',
      'timeout 5 rm keep/f11',
    ];
    for (let index = 1; index <= spellings.length + 1; index += 1) {
      await writeFile(path.join(workspace, 'keep', `f${index}`), 'keep me');
    }
    // A repository whose pushes land in a bare repository of the workspace: a push that ran leaves a ref there.
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: workspace,
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 't',
          GIT_AUTHOR_EMAIL: 't@t',
          GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@t',
        },
      }).toString();
    git('init', '-q', '--bare', 'remote.git');
    git('init', '-q', 'work');
    git('-C', 'work', 'commit', '-q', '--allow-empty', '-m', 'one');
    git('-C', 'work', 'remote', 'add', 'origin', '../remote.git');
    const pushes = [
      'git -C work push -q origin HEAD:refs/heads/main',
      'git --git-dir=work/.git push -q origin HEAD:refs/heads/main',
      'git --no-pager -C work push -q origin HEAD:refs/heads/main',
    ];
    const unclear = `R=rm; $R keep/f${spellings.length + 1}`;
    const commands = [...spellings, ...pushes, unclear];
    await writeConfig({ approval: { allow: ['shell'], deny: ['shell(rm)', 'shell(git push)'] } });
    harness.server.reply(
      ...commands.map((command, index) =>
        toolCallReply({ id: `call_${index}`, name: 'shell', arguments: { command } }),
      ),
      textReply('refused'),
    );

    const result = await print('clean up and publish', '--yes');

    expect(result.code).toBe(0);
    for (let index = 1; index <= spellings.length + 1; index += 1) {
      expect(existsSync(path.join(workspace, 'keep', `f${index}`)), commands[index - 1]).toBe(true);
    }
    expect(git('--git-dir', 'remote.git', 'for-each-ref')).toBe('');
    const last = harness.server.turnRequests().at(-1)!;
    for (const [index, command] of commands.entries()) {
      const text = toolResult(last, `call_${index}`) ?? '';
      expect(text, command).toMatch(/^Tool 'shell' was denied: /);
      if (command === unclear) expect(text).toContain('cannot tell for certain');
      else expect(text, command).toContain(pushes.includes(command) ? 'shell(git push)' : 'shell(rm)');
    }
    // The same push without the rule does run: the sandbox is not what stopped it.
    harness.server.reply(
      toolCallReply({ id: 'call_push', name: 'shell', arguments: { command: pushes[0] } }),
      textReply('pushed'),
    );
    await writeConfig({ approval: { allow: ['shell'] } });
    expect((await print('publish', '--yes')).code).toBe(0);
    expect(git('--git-dir', 'remote.git', 'for-each-ref')).toContain('refs/heads/main');
  });

  test('-p --json: a call refused by a rule or for want of --yes is denied: true, and the model is told it was denied', async () => {
    await mkdir(path.join(harness.sandbox.workspace, 'keep'));
    await writeConfig({ approval: { deny: ['shell(rm)'] } });
    harness.server.reply(
      toolCallReply({ id: 'call_rule', name: 'shell', arguments: { command: 'rm -rf keep' } }),
      toolCallReply({ id: 'call_unasked', name: 'shell', arguments: { command: 'touch made' } }),
      toolCallReply({ id: 'call_read', name: 'read_file', arguments: { path: 'nothing.txt' } }),
      textReply('nothing done'),
    );

    const result = await print('tidy', '--json');

    expect(result.code).toBe(0);
    expect(existsSync(path.join(harness.sandbox.workspace, 'keep'))).toBe(true);
    expect(existsSync(path.join(harness.sandbox.workspace, 'made'))).toBe(false);
    const ends = new Map<string, { denied?: boolean; success: boolean }>();
    for (const line of jsonLines(result.stdout)) {
      const payload = (
        line as { payload: { type: string; callId?: string; denied?: boolean; success: boolean } }
      ).payload;
      if (payload.type === 'tool_call_end' && payload.callId !== undefined) ends.set(payload.callId, payload);
    }
    expect(ends.get('call_rule')).toMatchObject({ denied: true, success: false });
    expect(ends.get('call_unasked')).toMatchObject({ denied: true, success: false });
    // A call that ran and failed is not a denial.
    expect(ends.get('call_read')?.success).toBe(false);
    expect(ends.get('call_read')?.denied).toBeUndefined();
    const last = harness.server.turnRequests().at(-1)!;
    expect(toolResult(last, 'call_rule')).toMatch(/^Tool 'shell' was denied: a deny rule .*shell\(rm\)/);
    expect(toolResult(last, 'call_unasked')).toMatch(
      /^Tool 'shell' was denied: the user did not approve running shell; in non-interactive mode pass --yes/,
    );
    for (const id of ['call_rule', 'call_unasked'])
      expect(toolResult(last, id)).not.toContain('aborted by hook');
  });

  test('a malformed rule in config.json is a configuration error: exit code 2, nothing runs', async () => {
    await writeConfig({ approval: { allow: ['shell(git status; rm -rf x)'] } });

    const result = await print('anything');

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('approval.allow');
    expect(harness.server.turnRequests()).toHaveLength(0);
  });
});
