import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { RequestError } from '@agentclientprotocol/sdk';
import { describe, expect, test } from 'vitest';
import {
  messagesOf,
  reasoningReply,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import {
  responsesCompleted,
  responsesOpening,
  responsesText,
  sseReply,
} from '../../../test-support/openai-wire.js';
import { type AcpChild, type EditorScript, startAcp } from './support/acp.js';
import { useCliHarness } from './support/harness.js';

const harness = useCliHarness();

/** Children to close after the test, whatever it asserted. */
const running: AcpChild[] = [];

async function start(editor?: EditorScript): Promise<AcpChild> {
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

function write(id: string, file: string, content: string) {
  return toolCallReply({ id, name: 'write_file', arguments: { path: file, content } });
}

async function writeConfig(config: unknown): Promise<void> {
  await mkdir(harness.sandbox.home, { recursive: true });
  await writeFile(path.join(harness.sandbox.home, 'config.json'), JSON.stringify(config));
}

/** A resource link to a local file, as an editor sends one for an @-mention. */
function fileLink(file: string) {
  return { type: 'resource_link' as const, name: path.basename(file), uri: pathToFileURL(file).href };
}

/** The JSON-RPC error a request was answered with. */
async function errorOf(request: Promise<unknown>): Promise<RequestError> {
  try {
    await request;
  } catch (error) {
    if (error instanceof RequestError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

describe('youyou acp keeps the terminal’s rules', () => {
  test('"always allow" is kept for the session: the second write is not asked about', async () => {
    try {
      harness.server.reply(write('call_a', 'a.txt', 'a'), write('call_b', 'b.txt', 'b'), textReply('both'));
      const child = await start({ answer: () => 'allow_always' });
      const sessionId = await newSession(child);
      await child.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] });
      expect(child.permissionRequests.map((request) => request.toolCall.toolCallId)).toEqual(['call_a']);
      expect(await readFile(path.join(harness.sandbox.workspace, 'b.txt'), 'utf8')).toBe('b');
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('"always reject" is kept for the session: the second write is refused without asking', async () => {
    try {
      harness.server.reply(write('call_a', 'a.txt', 'a'), write('call_b', 'b.txt', 'b'), textReply('none'));
      const child = await start({ answer: () => 'reject_always' });
      const sessionId = await newSession(child);
      await child.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] });
      expect(child.permissionRequests).toHaveLength(1);
      expect(existsSync(path.join(harness.sandbox.workspace, 'a.txt'))).toBe(false);
      expect(existsSync(path.join(harness.sandbox.workspace, 'b.txt'))).toBe(false);
      expect(toolResult(harness.server.turnRequests()[2]!, 'call_b')).toMatch(/reject|denied/);
    } finally {
      await closeAll();
    }
  }, 60_000);

  test("a deny rule and the workspace bound refuse a write before the editor's file system is asked", async () => {
    try {
      await writeConfig({ approval: { deny: ['write_file(secret.txt)'] } });
      harness.server.reply(
        write('call_deny', 'secret.txt', 'x'),
        write('call_out', '../outside.txt', 'x'),
        textReply('refused'),
      );
      const child = await start({ answer: () => 'allow_once', buffers: new Map() });
      const sessionId = await newSession(child);
      await child.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] });
      expect(child.writes).toEqual([]);
      const requests = harness.server.turnRequests();
      expect(toolResult(requests[1]!, 'call_deny')).toMatch(/deny rule/);
      expect(toolResult(requests[2]!, 'call_out')).toMatch(/outside the workspace/);
      expect(existsSync(path.join(harness.sandbox.root, 'outside.txt'))).toBe(false);
    } finally {
      await closeAll();
    }
  }, 60_000);

  test("a shell command runs as in the terminal: the editor sees its output, never youyou's own secrets", async () => {
    try {
      const secret = 'sk-ant-acp-secret-0123456789';
      harness.server.reply(
        toolCallReply({ id: 'call_env', name: 'shell', arguments: { command: 'env; echo ran-in-shell' } }),
        textReply('listed'),
      );
      const child = await startAcp({
        sandbox: harness.sandbox,
        baseURL: harness.server.baseURL,
        editor: { answer: () => 'allow_once' },
        env: { ANTHROPIC_API_KEY: secret },
      });
      running.push(child);
      const sessionId = await newSession(child);
      await child.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'env' }] });
      expect(child.permissionRequests[0]?.toolCall.kind).toBe('execute');
      const updates = JSON.stringify(child.updates);
      expect(updates).toContain('ran-in-shell');
      expect(updates).not.toContain(secret);
      expect(JSON.stringify(harness.server.wire.requests)).not.toContain(secret);
    } finally {
      await closeAll();
    }
  }, 60_000);

  test("a read outside the workspace is shown as a read call that failed, with the tool's reason", async () => {
    try {
      await writeFile(path.join(harness.sandbox.root, 'secret.txt'), 'OUTSIDE-SECRET\n');
      harness.server.reply(
        toolCallReply({ id: 'call_r', name: 'read_file', arguments: { path: '../secret.txt' } }),
        textReply('no'),
      );
      const child = await start();
      const sessionId = await newSession(child);
      await child.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read' }] });
      const updates = child.updates.map(({ update }) => update);
      expect(updates).toContainEqual(
        expect.objectContaining({
          sessionUpdate: 'tool_call',
          toolCallId: 'call_r',
          kind: 'read',
          locations: [],
        }),
      );
      const end = updates.find(
        (update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'call_r',
      );
      expect(end).toMatchObject({ status: 'failed' });
      expect(JSON.stringify(end)).toContain('outside the workspace');
      expect(JSON.stringify(child.updates)).not.toContain('OUTSIDE-SECRET');
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('linked files are read inside the workspace only; reasoning arrives as thought chunks', async () => {
    try {
      await writeFile(path.join(harness.sandbox.workspace, 'inside.txt'), 'INSIDE-CONTENT\n');
      await writeFile(path.join(harness.sandbox.root, 'secret.txt'), 'OUTSIDE-SECRET\n');
      harness.server.reply(reasoningReply(['thinking ', 'hard'], ['seen']));
      const child = await start();
      const sessionId = await newSession(child);
      await child.agent.request('session/prompt', {
        sessionId,
        prompt: [
          { type: 'text', text: 'look' },
          fileLink(path.join(harness.sandbox.workspace, 'inside.txt')),
          fileLink(path.join(harness.sandbox.root, 'secret.txt')),
        ],
      });
      const body = JSON.stringify(messagesOf(harness.server.turnRequests()[0]!));
      expect(body).toContain('INSIDE-CONTENT');
      expect(body).not.toContain('OUTSIDE-SECRET');
      const thoughts = child.updates
        .map(({ update }) =>
          update.sessionUpdate === 'agent_thought_chunk' && update.content.type === 'text'
            ? update.content.text
            : '',
        )
        .join('');
      expect(thoughts).toBe('thinking hard');
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('an image of the prompt reaches a model that takes images', async () => {
    try {
      harness.server.reply(
        sseReply([...responsesOpening(), ...responsesText(['a red dot']), responsesCompleted()]),
      );
      // The compatible provider's models are text-only: this one is OpenAI's (Responses API).
      const child = await startAcp({
        sandbox: harness.sandbox,
        baseURL: harness.server.baseURL,
        args: ['--provider', 'openai', '--model', 'gpt-4o-mini'],
        env: { OPENAI_API_KEY: 'sk-test-acp' },
      });
      running.push(child);
      const sessionId = await newSession(child);
      const answer = await child.agent.request('session/prompt', {
        sessionId,
        prompt: [
          { type: 'text', text: 'what is this?' },
          { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUg==' },
        ],
      });
      expect(answer.stopReason).toBe('end_turn');
      expect(JSON.stringify(harness.server.wire.requests[0]?.body)).toContain('iVBORw0KGgoAAAANSUhEUg==');
    } finally {
      await closeAll();
    }
  }, 60_000);

  test('bad requests are JSON-RPC errors; stdout carries only protocol frames, warnings go to stderr', async () => {
    try {
      const child = await start();
      const relative = await errorOf(
        child.agent.request('session/new', { cwd: 'relative/dir', mcpServers: [] }),
      );
      expect(relative.code).toBe(-32602);
      const absent = await errorOf(
        child.agent.request('session/new', {
          cwd: path.join(harness.sandbox.root, 'no-such-folder'),
          mcpServers: [],
        }),
      );
      expect(absent.code).toBe(-32602);
      expect(absent.message).toContain('no-such-folder');
      const unknown = await errorOf(
        child.agent.request('session/prompt', {
          sessionId: 'no-such-session',
          prompt: [{ type: 'text', text: 'hi' }],
        }),
      );
      expect(unknown.code).toBe(-32002);
      const missing = await errorOf(
        child.agent.request('session/load', {
          sessionId: 'no-such-session',
          cwd: harness.sandbox.workspace,
          mcpServers: [],
        }),
      );
      expect(missing.code).toBe(-32002);
      await child.agent.request('session/new', {
        cwd: harness.sandbox.workspace,
        mcpServers: [{ name: 'extra', command: 'true', args: [], env: [] }],
      });
      expect(child.stderr()).toContain('MCP servers the editor offers are not used');
      const { sessionId } = await child.agent.request('session/new', {
        cwd: harness.sandbox.workspace,
        mcpServers: [],
      });
      await child.agent.request('session/close', { sessionId });
      const closed = await errorOf(
        child.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] }),
      );
      expect(closed.code).toBe(-32002);
      const lines = child.stdoutLines();
      expect(lines.length).toBeGreaterThan(3);
      for (const line of lines) expect((JSON.parse(line) as { jsonrpc?: unknown }).jsonrpc).toBe('2.0');
    } finally {
      await closeAll();
    }
  }, 60_000);
});
