import { describe, expect, test, vi } from 'vitest';
import {
  contentText,
  messagesOf,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import { PROMPT_BACK, send, useTmuxHarness } from './support/harness.js';
import { configureFullServer, recordedEvents } from './support/mcp-fixture.js';

const harness = useTmuxHarness();

/** The text of the last user message of the model request at `index`. */
function lastUserText(index: number): string {
  const request = harness.server.turnRequests()[index];
  const users = messagesOf(request!).filter((message) => message.role === 'user');
  return contentText(users.at(-1)!);
}

describe('MCP prompts as /server:prompt commands', () => {
  test('key=value and positional arguments fill the prompt, which is sent as the user message', async () => {
    await configureFullServer(harness.sandbox);
    harness.server.reply(textReply('First review.'), textReply('Second review.'));
    const chat = await harness.startChat();

    await send(chat, '/full:review file=src/a.ts focus="error handling"');
    await chat.waitFor(/First review\.[\s\S]*› *\n*$/);
    expect(lastUserText(0)).toBe('Please review src/a.ts with a focus on error handling.');

    await send(chat, '/full:review src/b.ts');
    await chat.waitFor(/Second review\.[\s\S]*› *\n*$/);
    expect(lastUserText(1)).toBe('Please review src/b.ts.');
  }, 60_000);

  test('/prompts lists the typeable prompts; a missing argument or prompt is said, and nothing is sent', async () => {
    await configureFullServer(harness.sandbox);
    const chat = await harness.startChat();

    await send(chat, '/prompts');
    const listed = await chat.waitFor(/\/full:review file=… \[focus=…\].*\n› *\n*$/);
    // The prompt whose name holds an escape sequence is not offered (and did not clear the screen).
    expect(listed).not.toContain('bad name');
    expect(listed).toContain('› /prompts');

    await send(chat, '/full:review');
    await chat.waitFor(/missing file; usage: \/full:review file=… \[focus=…\]\n› *\n*$/);
    await send(chat, '/full:nothing');
    await chat.waitFor(/MCP server "full" has no prompt "nothing".*\n› *\n*$/);
    await send(chat, '/nobody:review');
    await chat.waitFor(/no MCP server is called "nobody".*\n› *\n*$/);
    expect(harness.server.turnRequests()).toHaveLength(0);
  }, 60_000);
});

describe("an MCP server's question (elicitation) in the terminal", () => {
  test('asks each field, checks it, and the answers go back to the server', async () => {
    const events = await configureFullServer(harness.sandbox);
    harness.server.reply(
      toolCallReply({ id: 'call_ask', name: 'full__ask', arguments: {} }),
      textReply('Noted.'),
    );
    const chat = await harness.startChat('--yes');

    await send(chat, 'ask me');
    const asked = await chat.waitFor(/Answer it\? \[y\]es · \[n\]o, decline · Ctrl-C cancels: *\n*$/);
    // The server's escape sequence is shown escaped, not obeyed.
    expect(asked).toMatch(/MCP server "full" asks: Which colour should the .*banner.* be\?/);
    expect(asked).not.toContain('\x1b');
    await send(chat, 'y');
    await chat.waitFor(/3\. blue\nColour\* \(1–3\): *\n*$/);
    await send(chat, '2');
    await chat.waitFor(/How many\* \(whole number 1–9\): *\n*$/);
    await send(chat, '12');
    await chat.waitFor(/at most 9\nHow many\* \(whole number 1–9\): *\n*$/);
    await send(chat, '3');
    await chat.waitFor(/Urgent \[y\/n\]: *\n*$/);
    await send(chat, 'y');
    await chat.waitFor(/Note: *\n*$/);
    await send(chat, '');
    await chat.waitFor(/Noted\.[\s\S]*› *\n*$/);

    const accepted = { action: 'accept', content: { colour: 'green', count: 3, urgent: true } };
    expect(toolResult(harness.server.turnRequests()[1]!, 'call_ask')).toBe(
      `answer: ${JSON.stringify(accepted)}`,
    );
    expect(recordedEvents(events)).toContainEqual({ event: 'elicited', result: accepted });
  }, 60_000);

  test('n declines, and Ctrl-C cancels the question (the turn goes on)', async () => {
    const events = await configureFullServer(harness.sandbox);
    harness.server.reply(
      toolCallReply({ id: 'call_one', name: 'full__ask', arguments: {} }),
      toolCallReply({ id: 'call_two', name: 'full__ask', arguments: {} }),
      textReply('Fine.'),
    );
    const chat = await harness.startChat('--yes');

    await send(chat, 'ask me twice');
    await chat.waitFor(/Answer it\?.*: *\n*$/);
    await send(chat, 'n');
    await chat.waitFor(/Declined\.\n[\s\S]*Answer it\?.*: *\n*$/);
    await chat.keys('C-c');
    await chat.waitFor(/Fine\.[\s\S]*› *\n*$/);
    await vi.waitFor(() =>
      expect(recordedEvents(events).map((entry) => entry.result)).toEqual([
        { action: 'decline' },
        { action: 'cancel' },
      ]),
    );
    expect(await chat.screen()).toMatch(PROMPT_BACK);
  }, 60_000);
});

describe('tools/list_changed', () => {
  test("a tool the server adds during a turn is offered in the next turn's request, and runs", async () => {
    await configureFullServer(harness.sandbox);
    harness.server.reply(
      toolCallReply({ id: 'call_add', name: 'full__add_tool', arguments: {} }),
      textReply('Added.'),
      toolCallReply({ id: 'call_added', name: 'full__added', arguments: {} }),
      textReply('Used it.'),
    );
    const chat = await harness.startChat('--yes');
    const offered = (index: number): string[] => {
      const body = harness.server.turnRequests()[index]?.body as { tools?: { function: { name: string } }[] };
      return (body?.tools ?? []).map((tool) => tool.function.name);
    };

    await send(chat, 'add a tool');
    await chat.waitFor(/Added\.[\s\S]*› *\n*$/);
    // Not mid-turn: both requests of the first turn offered the list it started with.
    expect(offered(0)).not.toContain('full__added');
    expect(offered(1)).not.toContain('full__added');

    await send(chat, 'use it');
    await chat.waitFor(/Used it\.[\s\S]*› *\n*$/);
    expect(offered(2)).toContain('full__added');
    expect(toolResult(harness.server.turnRequests()[3]!, 'call_added')).toBe('added ran');
  }, 60_000);
});
