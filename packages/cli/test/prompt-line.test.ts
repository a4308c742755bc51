import { describe, expect, test } from 'vitest';
import { contentText, messagesOf, textReply } from '../../../test-support/cli-wire.js';
import { useTmuxHarness } from './support/harness.js';

const harness = useTmuxHarness();
const { startChat } = harness;

/** The text of the last user message of the `index`th turn request. */
function sentText(index: number): string | undefined {
  const request = harness.server.turnRequests()[index];
  const last = request === undefined ? undefined : messagesOf(request).at(-1);
  return last === undefined ? undefined : contentText(last);
}

describe('the prompt line', () => {
  test('a long multi-line paste arrives whole as one message, shown as [pasted N lines]; what it holds acts as no key', async () => {
    harness.server.reply(textReply('Got it.'));
    const chat = await startChat();
    const lines = Array.from({ length: 8 }, (_, index) => `line ${index + 1}`);
    // An up arrow and a lookalike of the paste's end marker inside the paste are data, not keys.
    lines[3] = 'up \x1b[A here [201~ and \x1b[201 too';
    await chat.type('look: ');
    await chat.paste(lines.join('\n'));
    await chat.waitFor('› look: [pasted 8 lines]');
    await chat.type(' end');
    await chat.waitFor('[pasted 8 lines] end');
    expect(harness.server.turnRequests()).toHaveLength(0);
    await chat.keys('Enter');
    await chat.waitFor(/Got it\.[\s\S]*\n› *\n*$/);
    expect(harness.server.turnRequests()).toHaveLength(1);
    expect(sentText(0)).toBe(`look: ${lines.join('\n')} end`);
  });

  test('a short paste is shown as it is, on lines of its own, and is sent with Enter', async () => {
    harness.server.reply(textReply('Two.'));
    const chat = await startChat();
    await chat.paste('first\nsecond');
    await chat.waitFor(/› first\n +second/);
    await chat.keys('Enter');
    await chat.waitFor(/Two\.[\s\S]*\n› *\n*$/);
    expect(sentText(0)).toBe('first\nsecond');
  });

  test('Shift+Enter (kitty and xterm forms), Alt+Enter and \\ then Enter insert newlines; Enter sends', async () => {
    harness.server.reply(textReply('Five.'));
    const chat = await startChat();
    await chat.type('a');
    await chat.raw('\x1b[13;2u');
    await chat.type('b');
    await chat.raw('\x1b[27;2;13~');
    await chat.type('c');
    await chat.raw('\x1b\r');
    await chat.type('d\\');
    await chat.keys('Enter');
    await chat.type('e');
    await chat.waitFor(/› a\n +b\n +c\n +d\n +e/);
    expect(harness.server.turnRequests()).toHaveLength(0);
    await chat.keys('Enter');
    await chat.waitFor(/Five\.[\s\S]*\n› *\n*$/);
    expect(sentText(0)).toBe('a\nb\nc\nd\ne');
  });
});
