/**
 * Issue 26 in the terminal: after a `youyou` process is SIGKILLed in the middle of a turn, `youyou --continue`
 * offers to continue the cut turn, and continuing it finishes the turn from where its log stops.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import {
  contentText,
  hangingReply,
  messagesOf,
  textReply,
  toolCallReply,
} from '../../../test-support/cli-wire.js';
import { BIN } from './support/build.js';
import { startCli } from './support/cli.js';
import { send, useTmuxHarness } from './support/harness.js';
import { until } from './support/until.js';

const harness = useTmuxHarness();

test('--continue after a crash mid-stream offers the cut turn; yes asks the model again, once', async () => {
  harness.server.reply(hangingReply('Once upon'), textReply('Once upon a time, the end.'));
  const killed = startCli({
    args: ['-p', 'tell me a story', '--json', '--base-url', harness.server.baseURL],
    sandbox: harness.sandbox,
  });
  await until(() => killed.stdout().includes('text_delta'));
  killed.child.kill('SIGKILL');
  await killed.result;

  const chat = await harness.startInTmux([
    process.execPath,
    BIN,
    '--base-url',
    harness.server.baseURL,
    '--continue',
  ]);
  const offer = await chat.waitFor(/Continue the cut turn\? \[y\/N\] *\n*$/);
  expect(offer).toContain('The last turn was cut before it ended (0 tool call(s) without a result)');
  await send(chat, 'y');
  const shown = await chat.waitFor(/the end\.\n› *\n*$/);
  expect(shown).toContain('continuing the cut turn: asking the model again');
  const requests = harness.server.turnRequests();
  expect(requests).toHaveLength(2);
  const texts = messagesOf(requests[1]!).map(contentText);
  expect(texts.filter((text) => text === 'tell me a story')).toHaveLength(1);
  // The killed stream's partial answer was never saved: the model does not see it.
  expect(texts.join('\n')).not.toContain('Once upon');
}, 60_000);

test('--continue after a crash while a shell command ran asks before running it again; no leaves it run once', async () => {
  const workspace = harness.sandbox.workspace;
  const command = 'echo ran >> effects.txt; touch started.txt; sleep 300';
  harness.server.reply(
    toolCallReply({ id: 'call_1', name: 'shell', arguments: { command } }),
    textReply('I will check effects.txt before going on.'),
  );
  const killed = startCli({
    args: ['-p', 'record a run', '--yes', '--json', '--base-url', harness.server.baseURL],
    sandbox: harness.sandbox,
  });
  await until(() => existsSync(join(workspace, 'started.txt')));
  killed.child.kill('SIGKILL');
  await killed.result;
  expect(readFileSync(join(workspace, 'effects.txt'), 'utf8')).toBe('ran\n');

  const chat = await harness.startInTmux([
    process.execPath,
    BIN,
    '--base-url',
    harness.server.baseURL,
    '--continue',
  ]);
  const offer = await chat.waitFor(/Continue the cut turn\? \[y\/N\] *\n*$/);
  expect(offer).toContain('1 tool call(s) without a result, 1 of which may have run');
  await send(chat, 'y');
  // The approval question of the call that may have run: refused, it does not run again.
  // Keys answer once the question shows its choices (it waits for the keyboard to be quiet first).
  await chat.waitFor(/Allow shell[\s\S]*y = yes/);
  await chat.keys('n');
  await chat.waitFor(/check effects\.txt before going on\.\n› *\n*$/);
  expect(readFileSync(join(workspace, 'effects.txt'), 'utf8')).toBe('ran\n');
  const last = harness.server.turnRequests().at(-1);
  const result = messagesOf(last!).find((message) => message.role === 'tool');
  expect(result === undefined ? '' : contentText(result)).toMatch(/may have run.*unknown/s);
}, 60_000);
