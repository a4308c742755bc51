import { afterEach, describe, expect, test } from 'vitest';
import type { SessionEvent } from '../src/index.js';
import { InMemorySessionStorage } from '../src/index.js';
import { SessionLog } from '../src/log/session-log.js';
import { ScriptedModelProvider } from '../src/testing/index.js';
import { buildAgent, defineTool, runTurn, shutdownAgents } from './support/agent-fixtures.js';

afterEach(shutdownAgents);

const message = (text: string) => ({
  type: 'user_message' as const,
  content: [{ type: 'text' as const, text }],
});

describe('SessionLog', () => {
  test('a subclass that overrides saveEvent is written through its own saveEvent, in order, one pass for a burst', async () => {
    const seen: string[] = [];
    class Watched extends InMemorySessionStorage {
      override async saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
        seen.push(
          event.payload.type === 'user_message' ? (event.payload.content[0] as { text: string }).text : '',
        );
        await new Promise((resolve) => setTimeout(resolve, 1));
        await super.saveEvent(sessionId, event);
      }
    }
    const storage = new Watched();
    const log = new SessionLog({ storage, sessionId: 's' });
    const first = log.append(message('a'));
    const second = log.append(message('b'));
    const third = log.append(message('c'));
    expect(first).toBeInstanceOf(Promise);
    // Appends made while a pass runs join it: one promise, settled once all three are written.
    expect(second).toBe(first);
    expect(third).toBe(first);
    await third;
    expect(seen).toEqual(['a', 'b', 'c']);
    expect((await storage.loadSession('s'))?.length).toBe(3);
    expect(log.pendingCount).toBe(0);
  });

  test('an event the storage refuses stays queued, is reported as STORAGE_ERROR, and is written first once it works', async () => {
    let refuse = true;
    class Flaky extends InMemorySessionStorage {
      override saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
        if (refuse) return Promise.reject(new Error('disk full'));
        return super.saveEvent(sessionId, event);
      }
    }
    const storage = new Flaky();
    const log = new SessionLog({ storage, sessionId: 's' });
    await expect(log.append(message('kept'))).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
    expect(log.pendingCount).toBe(1);
    refuse = false;
    await log.append(message('next'));
    const saved = await storage.loadSession('s');
    expect(saved?.map((event) => event.payload)).toEqual([message('kept'), message('next')]);
    expect(log.pendingCount).toBe(0);
  });

  test("a storage with saveEvents gets a model call's usage record and the answer saved after it in one call", async () => {
    const batches: string[][] = [];
    class Batching extends InMemorySessionStorage {
      async saveEvents(sessionId: string, events: readonly SessionEvent[]): Promise<void> {
        batches.push(events.map(({ payload }) => (payload.type === 'metadata' ? payload.key : payload.type)));
        for (const event of events) await super.saveEvent(sessionId, event);
      }
    }
    const storage = new Batching();
    const usage = { inputTokens: 10, outputTokens: 2 };
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'look', callId: 'c1' },
          { type: 'usage', usage },
        ],
        [{ type: 'usage', usage }],
        [
          { type: 'text', text: 'done' },
          { type: 'usage', usage },
        ],
      ],
    });
    const { agent } = await buildAgent({
      provider,
      sessionStorage: storage,
      tools: [defineTool({ name: 'look' })],
    });
    const session = await agent.newSession();
    await runTurn(session, 'look twice');
    await runTurn(session, 'and answer');

    const kinds = (await storage.loadSession(session.id))?.map(({ payload }) =>
      payload.type === 'metadata' ? payload.key : payload.type,
    );
    // The log keeps the order of events: each call's usage record right before what its answer saved.
    expect(kinds?.filter((kind) => kind !== 'session_config' && kind !== 'turn_ended')).toEqual([
      'user_message',
      'usage',
      'tool_call',
      'tool_result',
      'usage',
      'user_message',
      'usage',
      'assistant_message',
    ]);
    // Written together: the tool call with its usage record, and the answer with its own; the usage of the call
    // that answered nothing is written when its turn ends.
    expect(batches).toContainEqual(['usage', 'tool_call']);
    expect(batches).toContainEqual(['usage', 'assistant_message']);
    expect(kinds?.filter((kind) => kind === 'usage')).toHaveLength(3);
  });
});
