import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import stringWidth from 'string-width';
import { describe, expect, test } from 'vitest';
import { textReply, toolCallReply } from '../../../test-support/cli-wire.js';
import { errorReply } from '../../../test-support/openai-wire.js';
import { REPOSITORY } from './support/build.js';
import { jsonLines, runCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

const harness = useCliHarness();

function print(prompt: string, ...extra: string[]) {
  return runCli({
    args: ['-p', prompt, '--base-url', harness.server.baseURL, ...extra],
    sandbox: harness.sandbox,
  });
}

/** What a terminal would interpret: ESC, BEL, NUL, the other C0 controls but line feed, DEL, C1, bidi controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding raw control characters is the point.
const INTERPRETED = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

/** OSC 0 sets the window title, OSC 52 writes the clipboard (here: `rm -rf ~`). */
const OSC_TITLE = '\x1b]0;owned\x07';
const OSC_CLIPBOARD = '\x1b]52;c;cm0gLXJmIH4=\x07';

describe('hostile text in youyou -p', () => {
  test('OSC 0/52 in the answer never reach stdout as ESC or BEL: they are shown escaped', async () => {
    harness.server.reply(textReply(`Done${OSC_TITLE}. `, `Copied${OSC_CLIPBOARD}\u202eevil\u009b2J`));

    const result = await print('hello');

    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(INTERPRETED);
    expect(result.stdout).toContain('Done\\e]0;owned\\a. ');
    expect(result.stdout).toContain('\\e]52;c;cm0gLXJmIH4=\\a');
    expect(result.stdout).toContain('\\u202eevil\\x9b2J');
  });

  test('NUL, ESC and CR from a tool argument (a path) never reach stderr raw', async () => {
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'read_file', arguments: { path: 'a\u0000b\x1b[2K\rc.txt' } }),
      textReply('ok'),
    );

    const result = await print('read it');

    expect(result.stderr).not.toMatch(INTERPRETED);
    expect(result.stderr).toContain('a\\0b\\e[2K\\rc.txt');
  });

  test('an error message from the provider is shown escaped', async () => {
    harness.server.reply(errorReply({ status: 400, message: `bad request${OSC_TITLE}\x1b[31mred` }));

    const result = await print('hello');

    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(INTERPRETED);
    expect(result.stderr).toContain('bad request\\e]0;owned\\a\\e[31mred');
  });

  test('MCP texts (a tool argument, the stderr of a failing server) reach stderr escaped', async () => {
    const fixture = path.join(REPOSITORY, 'packages/mcp/test/fixtures/server.mjs');
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(
      path.join(harness.sandbox.home, 'config.json'),
      JSON.stringify({
        mcpServers: {
          fx: { command: process.execPath, args: [fixture] },
          broken: { command: '/bin/sh', args: ['-c', "printf 'boom\\033]0;owned\\007\\033[2J' >&2; exit 3"] },
        },
      }),
    );
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'fx__echo', arguments: { text: `hi${OSC_TITLE}` } }),
      textReply('echoed'),
    );

    const result = await print('echo it');

    expect(result.stdout).toBe('echoed\n');
    expect(result.stderr).not.toMatch(INTERPRETED);
    expect(result.stderr).toContain('hi\\e]0;owned\\a');
    expect(result.stderr).toContain('boom\\e]0;owned\\a\\e[2J');
  });

  test('--json stays exact JSON: the same text parses back, and no control byte is written raw', async () => {
    const answer = `a${OSC_CLIPBOARD}b\u009b2J\u202ec\u2028d`;
    harness.server.reply(textReply(answer));

    const result = await print('hello', '--json');

    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(INTERPRETED);
    expect(result.stdout).not.toContain('\u2028');
    const text = jsonLines(result.stdout)
      .map((event) => (event as { payload: { type: string; text?: string } }).payload)
      .filter((payload) => payload.type === 'text_delta')
      .map((payload) => payload.text)
      .join('');
    expect(text).toBe(answer);
  });

  test('`youyou sessions` shows a hostile title escaped, and fits wide characters into the width', async () => {
    harness.server.reply(textReply('one'), textReply('two'));
    await print(`title${OSC_TITLE}\x1b[2J`);
    await print('⌚'.repeat(60));

    const listing = await runCli({ args: ['sessions'], sandbox: harness.sandbox });
    const json = await runCli({ args: ['sessions', '--json'], sandbox: harness.sandbox });

    expect(listing.code).toBe(0);
    expect(listing.stdout).not.toMatch(INTERPRETED);
    expect(listing.stdout).toContain('title\\e]0;owned\\a\\e[2J');
    // Not a terminal: the table is fitted to 100 columns; ⌚ takes two of them.
    for (const line of listing.stdout.split('\n')) expect(stringWidth(line)).toBeLessThanOrEqual(100);
    expect(listing.stdout).toContain('⌚⌚');
    expect(json.stdout).not.toMatch(INTERPRETED);
    const titles = jsonLines(json.stdout).map((session) => (session as { title: string }).title);
    expect(titles).toContain(`title${OSC_TITLE}\x1b[2J`);
  });
});
