import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test, vi } from 'vitest';
import {
  contentText,
  messagesOf,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import { chatFinish, chatTextChunks, sseReply } from '../../../test-support/openai-wire.js';
import { type AcpChild, agentText, startAcp } from './support/acp.js';
import { useCliHarness } from './support/harness.js';

const harness = useCliHarness();
const STUCK_SERVER = fileURLToPath(new URL('./fixtures/stuck-tool-mcp-server.mjs', import.meta.url));

/** Children to close after the test, whatever it asserted. */
const running: AcpChild[] = [];

async function start(editor?: Parameters<typeof startAcp>[0]['editor']): Promise<AcpChild> {
  const child = await startAcp({
    sandbox: harness.sandbox,
    baseURL: harness.server.baseURL,
    ...(editor === undefined ? {} : { editor }),
  });
  running.push(child);
  return child;
}

async function closeAll(): Promise<void> {
  for (const child of running.splice(0)) await child.close();
}

async function newSession(child: AcpChild): Promise<string> {
  const { sessionId } = await child.agent.request('session/new', {
    cwd: harness.sandbox.workspace,
    mcpServers: [],
  });
  return sessionId;
}

/** The statuses the editor was told of one tool call, in order. */
function statusesOf(child: AcpChild, toolCallId: string): unknown[] {
  return child.updates
    .map(({ update }) => update)
    .filter((update) => 'toolCallId' in update && update.toolCallId === toolCallId)
    .map((update) => ('status' in update ? update.status : undefined));
}

function prompt(child: AcpChild, sessionId: string, text: string) {
  return child.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
}

describe('youyou acp, driven by the ACP SDK client', () => {
  test('initialize offers loadSession and images; a streamed answer arrives as chunks and ends end_turn', async () => {
    try {
      harness.server.reply(textReply('Hel', 'lo ', 'editor'));
      const child = await start();
      expect(child.initialized.protocolVersion).toBe(1);
      expect(child.initialized.agentCapabilities?.loadSession).toBe(true);
      expect(child.initialized.agentCapabilities?.promptCapabilities?.image).toBe(true);
      const sessionId = await newSession(child);
      const response = await prompt(child, sessionId, 'say hello');
      expect(response.stopReason).toBe('end_turn');
      const chunks = child.updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk');
      expect(chunks.length).toBeGreaterThan(1);
      expect(chunks.every((entry) => entry.sessionId === sessionId)).toBe(true);
      expect(agentText(child.updates)).toBe('Hello editor');
      const [request] = harness.server.turnRequests();
      expect(contentText(messagesOf(request!).at(-1)!)).toBe('say hello');
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('a write the editor allows runs: the file is on disk and the call is shown with its diff', async () => {
    try {
      harness.server.reply(
        toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'out.txt', content: 'hi\n' } }),
        textReply('written'),
      );
      const child = await start({ answer: () => 'allow_once' });
      const sessionId = await newSession(child);
      expect((await prompt(child, sessionId, 'write it')).stopReason).toBe('end_turn');
      expect(await readFile(path.join(harness.sandbox.workspace, 'out.txt'), 'utf8')).toBe('hi\n');
      const [asked] = child.permissionRequests;
      expect(asked?.toolCall.kind).toBe('edit');
      expect(asked?.toolCall.content).toContainEqual({
        type: 'diff',
        path: path.join(harness.sandbox.workspace, 'out.txt'),
        oldText: null,
        newText: 'hi\n',
      });
      expect(asked?.options.map((option) => option.kind)).toEqual([
        'allow_once',
        'allow_always',
        'reject_once',
        'reject_always',
      ]);
      expect(statusesOf(child, 'call_w')).toEqual(['pending', 'in_progress', 'completed']);
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('a write the editor rejects does not run, and the model is told it was denied', async () => {
    try {
      harness.server.reply(
        toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'out.txt', content: 'no\n' } }),
        textReply('understood'),
      );
      const child = await start({ answer: () => 'reject_once' });
      const sessionId = await newSession(child);
      expect((await prompt(child, sessionId, 'write it')).stopReason).toBe('end_turn');
      expect(child.permissionRequests).toHaveLength(1);
      expect(existsSync(path.join(harness.sandbox.workspace, 'out.txt'))).toBe(false);
      expect(statusesOf(child, 'call_w')).toEqual(['pending', 'failed']);
      const [, second] = harness.server.turnRequests();
      expect(toolResult(second!, 'call_w')).toMatch(/denied/);
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('session/cancel during a tool that never answers ends the prompt with stopReason cancelled', async () => {
    try {
      const started = path.join(harness.sandbox.root, 'stuck-started');
      await mkdir(harness.sandbox.home, { recursive: true });
      await writeFile(
        path.join(harness.sandbox.home, 'config.json'),
        JSON.stringify({
          mcpServers: { hold: { command: process.execPath, args: [STUCK_SERVER, started] } },
        }),
      );
      harness.server.reply(
        toolCallReply({ id: 'call_stuck', name: 'hold__stuck', arguments: {} }),
        textReply('never asked for'),
      );
      const child = await start();
      const sessionId = await newSession(child);
      const answered = prompt(child, sessionId, 'wait for it');
      await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 30_000, interval: 50 });
      await child.agent.notify('session/cancel', { sessionId });
      expect((await answered).stopReason).toBe('cancelled');
      expect(harness.server.turnRequests()).toHaveLength(1);
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('session/cancel while the editor is asked about a call: the call does not run, the prompt is cancelled', async () => {
    try {
      harness.server.reply(
        toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'out.txt', content: 'x' } }),
        textReply('never asked for'),
      );
      const child = await start({ answer: () => 'hold' });
      const sessionId = await newSession(child);
      const answered = prompt(child, sessionId, 'write it');
      await vi.waitFor(() => expect(child.permissionRequests).toHaveLength(1), {
        timeout: 30_000,
        interval: 20,
      });
      await child.agent.notify('session/cancel', { sessionId });
      expect((await answered).stopReason).toBe('cancelled');
      expect(existsSync(path.join(harness.sandbox.workspace, 'out.txt'))).toBe(false);
      expect(harness.server.turnRequests()).toHaveLength(1);
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('an answer cut by the output limit stops with max_tokens', async () => {
    try {
      harness.server.reply(
        sseReply([...chatTextChunks(['cut sho']), ...chatFinish({ finishReason: 'length', usage: null })]),
      );
      const child = await start();
      const sessionId = await newSession(child);
      expect((await prompt(child, sessionId, 'write a lot')).stopReason).toBe('max_tokens');
      expect(agentText(child.updates)).toBe('cut sho');
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('a session loaded by a new process replays its history, and the next prompt carries it', async () => {
    try {
      harness.server.reply(
        toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'n.txt', content: '42' } }),
        textReply('the answer is 42'),
      );
      const first = await start({ answer: () => 'allow_once' });
      const sessionId = await newSession(first);
      await prompt(first, sessionId, 'remember the number');
      expect(await first.close()).toBe(0);

      const second = await start();
      await second.agent.request('session/load', {
        sessionId,
        cwd: harness.sandbox.workspace,
        mcpServers: [],
      });
      const replayed = second.updates.map(({ update }) => update);
      expect(replayed).toContainEqual({
        sessionUpdate: 'user_message_chunk',
        content: { type: 'text', text: 'remember the number' },
      });
      expect(agentText(second.updates)).toBe('the answer is 42');
      expect(replayed).toContainEqual(
        expect.objectContaining({ sessionUpdate: 'tool_call', toolCallId: 'call_w', kind: 'edit' }),
      );
      expect(replayed).toContainEqual(
        expect.objectContaining({
          sessionUpdate: 'tool_call_update',
          toolCallId: 'call_w',
          status: 'completed',
        }),
      );
      harness.server.reply(textReply('still 42'));
      expect((await prompt(second, sessionId, 'what was it?')).stopReason).toBe('end_turn');
      const last = harness.server.turnRequests().at(-1)!;
      const texts = messagesOf(last).map(contentText);
      expect(texts).toContain('remember the number');
      expect(texts).toContain('the answer is 42');
      expect(texts.at(-1)).toBe('what was it?');
    } finally {
      await closeAll();
    }
  }, 90_000);

  test("with the editor's file system, read_file, write_file and edit_file use its buffers, not the disk", async () => {
    try {
      const file = path.join(harness.sandbox.workspace, 'notes.txt');
      await writeFile(file, 'saved on disk\n');
      const buffers = new Map([[file, 'unsaved buffer\n']]);
      harness.server.reply(
        toolCallReply({ id: 'call_r', name: 'read_file', arguments: { path: 'notes.txt' } }),
        toolCallReply({
          id: 'call_w',
          name: 'write_file',
          arguments: { path: 'notes.txt', content: 'from the agent\n' },
        }),
        toolCallReply({
          id: 'call_e',
          name: 'edit_file',
          arguments: { path: 'notes.txt', oldString: 'agent', newString: 'editor' },
        }),
        textReply('done'),
      );
      const child = await start({ answer: () => 'allow_once', buffers });
      const sessionId = await newSession(child);
      expect((await prompt(child, sessionId, 'edit notes')).stopReason).toBe('end_turn');
      const [, second] = harness.server.turnRequests();
      expect(toolResult(second!, 'call_r')).toContain('unsaved buffer');
      expect(child.writes).toEqual([
        { sessionId, path: file, content: 'from the agent\n' },
        { sessionId, path: file, content: 'from the editor\n' },
      ]);
      expect(await readFile(file, 'utf8')).toBe('saved on disk\n');
    } finally {
      await closeAll();
    }
  }, 60_000);
});
