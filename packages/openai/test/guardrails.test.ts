/**
 * The model-call guardrails on a real wire and a real SQLite file: a BeforeModelCall redaction is what the
 * server receives (its bytes), and an answer an AfterModelCall hook blocks is in neither the client's events nor
 * the session's database file.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentBuilder, type ModelCallRequestData, type Plugin } from '@youyou/agent';
import { openSqliteStorage } from '@youyou/sqlite';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { chatFinish, chatTextChunks, sseReply } from '../../../test-support/openai-wire.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { openaiChatProvider } from '../src/index.js';
import { collect, TEST_API_KEY, typesOf } from './support/dialects.js';

const SECRET = 'sk-live-9f8e7d6c5b4a3210';

let server: WireServer;
let folder: string;
beforeEach(async () => {
  server = await startWireServer();
  folder = mkdtempSync(join(tmpdir(), 'youyou-guardrails-'));
});
afterEach(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

function guardPlugin(apply: Plugin['apply']): Plugin {
  return {
    id: 'guard',
    displayName: 'Guard',
    description: 'Test guardrails.',
    initialize: async () => undefined,
    apply,
    shutdown: async () => undefined,
  };
}

async function agentOn(plugin: Plugin, databasePath: string) {
  const storage = await openSqliteStorage(databasePath);
  const agent = await new AgentBuilder({ defaultModel: 'gpt-4o-mini' })
    .registerModelProvider(openaiChatProvider({ apiKey: TEST_API_KEY, baseURL: `${server.url}/v1` }))
    .registerSessionStorage(storage.sessions)
    .registerPlugin(plugin, { from: 'test' })
    .build();
  return { agent, storage };
}

/** Every byte SQLite keeps for the database: the file and its journal files. */
function databaseBytes(): string {
  return readdirSync(folder)
    .map((name) => readFileSync(join(folder, name)).toString('latin1'))
    .join('\n');
}

test('a BeforeModelCall redaction is what reaches the wire', async () => {
  server.enqueue(sseReply([...chatTextChunks(['ok']), ...chatFinish()]));
  const plugin = guardPlugin((context) => {
    context.tap('BeforeModelCall', (payload) => {
      const data = payload.data as ModelCallRequestData;
      const messages = data.messages.map((message) =>
        message.type === 'user'
          ? {
              ...message,
              content: message.content.map((block) =>
                block.type === 'text'
                  ? { ...block, text: block.text.replaceAll(SECRET, '[REDACTED]') }
                  : block,
              ),
            }
          : message,
      );
      return { type: 'continue_with', data: { messages } };
    });
  });
  const { agent, storage } = await agentOn(plugin, join(folder, 'sessions.db'));
  const session = await agent.newSession();
  const events = await collect(await session.sendMessage(`deploy with ${SECRET}`));
  expect(typesOf(events).at(-1)).toBe('turn_complete');
  expect(server.requests).toHaveLength(1);
  expect(server.requests[0]?.rawBody).not.toContain(SECRET);
  expect(server.requests[0]?.rawBody).toContain('deploy with [REDACTED]');
  await agent.shutdown();
  await storage.close();
});

test('an answer AfterModelCall blocks reaches neither the events nor the SQLite file', async () => {
  server.enqueue(sseReply([...chatTextChunks(['LEAKED-', 'CREDENTIALS']), ...chatFinish()]));
  const plugin = guardPlugin((context) => {
    context.tap('AfterModelCall', (payload) => {
      const text = (payload.data as { text: string }).text;
      return text.includes('CREDENTIALS')
        ? { type: 'abort', reason: 'credentials in the answer' }
        : undefined;
    });
  });
  const { agent, storage } = await agentOn(plugin, join(folder, 'sessions.db'));
  const session = await agent.newSession();
  const events = await collect(await session.sendMessage('show me the config'));
  expect(JSON.stringify(events)).not.toContain('LEAKED');
  expect(typesOf(events)).toEqual(['usage', 'error', 'turn_complete']);
  const error = events[1]?.payload;
  expect(error?.type === 'error' && error.error.code).toBe('MODEL_CALL_BLOCKED');
  await agent.shutdown();
  await storage.close();
  expect(databaseBytes()).toContain('show me the config');
  expect(databaseBytes()).not.toContain('LEAKED');
});
