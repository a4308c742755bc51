import { describe, expect, test } from 'vitest';
import { contentText, hangingReply, messagesOf, textReply } from '../../../test-support/cli-wire.js';
import { BIN } from './support/build.js';
import { jsonLines, runCli, startCli } from './support/cli.js';
import { send, useTmuxHarness } from './support/harness.js';
import { until } from './support/until.js';

const harness = useTmuxHarness();
const { startChat } = harness;

function modelOf(index: number): unknown {
  return (harness.server.turnRequests()[index]?.body as { model?: unknown } | undefined)?.model;
}

async function sessionsJson(): Promise<{ sessionId: string; messageCount: number }[]> {
  const result = await runCli({ args: ['sessions', '--json'], sandbox: harness.sandbox });
  return jsonLines(result.stdout) as { sessionId: string; messageCount: number }[];
}

describe('slash commands of the session', () => {
  test('/model NAME sends the next request of the same session with the new model', async () => {
    harness.server.reply(textReply('First answer.'), textReply('Second answer.'));
    const chat = await startChat();

    await send(chat, 'one');
    await chat.waitFor(/First answer\.\n› *\n*$/);
    await send(chat, '/model other-model:7b');
    await chat.waitFor(/other-model:7b\n› *\n*$/);
    await send(chat, 'two');
    await chat.waitFor(/Second answer\.\n› *\n*$/);

    expect(modelOf(0)).not.toBe('other-model:7b');
    expect(modelOf(1)).toBe('other-model:7b');
    // Still one session: the second request carries the first exchange.
    expect(messagesOf(harness.server.turnRequests()[1]!).map(contentText)).toContain('First answer.');
    expect(await sessionsJson()).toHaveLength(1);
  }, 60_000);

  test('/clear clears the screen and starts a new session', async () => {
    harness.server.reply(textReply('Noted the secret plan.'), textReply('Fresh start.'));
    const chat = await startChat();

    await send(chat, 'the secret plan');
    await chat.waitFor(/Noted the secret plan\.\n› *\n*$/);
    await send(chat, '/clear');
    const cleared = await chat.waitFor(/New session\.\n› *\n*$/);
    expect(cleared).not.toContain('secret plan');
    await send(chat, 'hello again');
    await chat.waitFor(/Fresh start\.\n› *\n*$/);

    const texts = messagesOf(harness.server.turnRequests()[1]!).map(contentText);
    expect(texts).toContain('hello again');
    expect(texts.join('\n')).not.toContain('secret plan');
    await chat.keys('C-d');
    await chat.waitForExit();
    expect(await sessionsJson()).toHaveLength(2);
  }, 60_000);
});

describe('resume', () => {
  test('shows the message count that sessions lists, also after a cancelled turn', async () => {
    harness.server.reply(hangingReply('half an ans'));
    const cancelled = startCli({
      args: ['-p', 'tell me a story', '--json', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    await until(() => cancelled.stdout().includes('text_delta'));
    cancelled.child.kill('SIGINT');
    expect((await cancelled.result).code).toBe(130);
    const [listed] = await sessionsJson();
    expect(listed).toBeDefined();

    const chat = await startChat('resume', listed!.sessionId);

    const screen = await chat.screen();
    const shown = /Resumed session \S+ · (\d+) messages/.exec(screen);
    expect(shown?.[1]).toBe(String(listed!.messageCount));
  }, 60_000);

  test('resume of a session another youyou runs exits 1 with one line', async () => {
    harness.server.reply(textReply('Saved.'), hangingReply('busy '));
    const first = await runCli({
      args: ['-p', 'start', '--json', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    const id = (jsonLines(first.stdout)[0] as { sessionId: string }).sessionId;
    const holder = startCli({
      args: ['resume', id, '-p', 'keep going', '--json', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    await until(() => holder.stdout().includes('text_delta'));

    const command = [process.execPath, BIN, '--base-url', harness.server.baseURL, 'resume', id]
      .map((part) => `'${part}'`)
      .join(' ');
    const tmux = await harness.startInTmux(['sh', '-c', `${command}; echo "EXIT=$?"; sleep 60`]);
    const screen = await tmux.waitFor(/EXIT=\d+/);
    expect(screen).toContain('EXIT=1');
    const lines = screen.split('\n').filter((line) => line.trim() !== '');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(id);
    expect(harness.server.turnRequests()).toHaveLength(2);

    holder.child.kill('SIGINT');
    await holder.result;
  }, 60_000);

  test('/resume of a session another youyou runs keeps the current session', async () => {
    harness.server.reply(
      textReply('Saved.'),
      hangingReply('busy '),
      textReply('Hello.'),
      textReply('Still here.'),
    );
    const first = await runCli({
      args: ['-p', 'start', '--json', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    const id = (jsonLines(first.stdout)[0] as { sessionId: string }).sessionId;
    const holder = startCli({
      args: ['resume', id, '-p', 'keep going', '--json', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    await until(() => holder.stdout().includes('text_delta'));
    const chat = await startChat();
    await send(chat, 'my own session');
    await chat.waitFor(/Hello\.\n› *\n*$/);

    await send(chat, `/resume ${id}`);
    await chat.waitFor(new RegExp(`${id}.*\\n› *\\n*$`));
    await send(chat, 'still mine?');
    await chat.waitFor(/Still here\.\n› *\n*$/);

    const texts = messagesOf(harness.server.turnRequests().at(-1)!).map(contentText);
    expect(texts).toContain('my own session');
    expect(texts).not.toContain('start');
    holder.child.kill('SIGINT');
    await holder.result;
  }, 60_000);
});
