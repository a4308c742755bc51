import { createHook } from 'node:async_hooks';
import {
  AgentBuilder,
  type ChatEvent,
  type ChatRequest,
  type ModelProvider,
  type ToolHandler,
} from '@youyou/agent';
import { scriptedModel } from '@youyou/agent/testing';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStorage } from '../src/index.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

// The short soak of issue 25 on a SQLite file (packages/agent/test/soak.test.ts has the in-memory one and the
// planted leaks): sessions with tool turns, each closed, leave no Session, turn or event alive after a full gc,
// and once the storage is closed no timer or other handle made by the storage or the runtime is left open
// (a session's claim heartbeat, the search index's idle pass).

const SESSIONS = 20;
const TURNS = 3;

let folder: TempFolder;

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  await folder.remove();
});

/** A tool call first, then a text once the tool's result is the last message. */
const provider: ModelProvider = {
  id: 'soak',
  models: [scriptedModel()],
  async *chat(request: ChatRequest): AsyncIterable<ChatEvent> {
    if (request.messages.at(-1)?.type === 'tool_result') {
      yield { type: 'text_delta', text: 'found it' };
      yield { type: 'done', stopReason: 'end_turn' };
      return;
    }
    yield {
      type: 'tool_call',
      callId: `call-${request.messages.length}`,
      toolName: 'lookup',
      arguments: '{}',
    };
    yield { type: 'done', stopReason: 'tool_use' };
  },
};

const lookup: ToolHandler = {
  name: 'lookup',
  description: 'looks something up',
  parametersSchema: { type: 'object', properties: {} },
  isMutating: false,
  execute: async () => ({ content: 'a value', isError: false }),
};

/** Handles (not promises) made from the packages' code while recording, and not destroyed since. */
function handleWatch() {
  const live = new Map<number, string>();
  let recording = true;
  const hook = createHook({
    init(asyncId, type) {
      if (!recording || type === 'PROMISE') return;
      if ((new Error().stack ?? '').includes('/packages/')) live.set(asyncId, type);
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return {
    pause: () => {
      recording = false;
    },
    stop: () => hook.disable(),
    open: () => [...live.values()],
  };
}

/** Runs the sessions and closes the agent; nothing of them stays referenced but the WeakRefs. */
async function runSessions(
  database: Awaited<ReturnType<typeof openSqliteStorage>>,
  weak: WeakRef<object>[],
): Promise<number> {
  const agent = await new AgentBuilder({ defaultModel: scriptedModel().id })
    .registerModelProvider(provider)
    .registerTool(lookup)
    .registerSessionStorage(database.sessions)
    .build();
  let events = 0;
  for (let index = 0; index < SESSIONS; index += 1) {
    const session = await agent.newSession();
    weak.push(new WeakRef(session));
    for (let turnIndex = 0; turnIndex < TURNS; turnIndex += 1) {
      const turn = await session.sendMessage(`question ${turnIndex}`);
      weak.push(new WeakRef(turn));
      for await (const event of turn) {
        weak.push(new WeakRef(event));
        events += 1;
        if (event.payload.type === 'error') throw event.payload.error;
      }
    }
    await session.close();
  }
  await agent.shutdown();
  return events;
}

test(`${SESSIONS} sessions × ${TURNS} tool turns on SQLite: nothing alive after a gc, no handle open after close`, async () => {
  const weak: WeakRef<object>[] = [];
  const handles = handleWatch();
  const database = await openSqliteStorage(folder.file('soak.db'));
  const events = await runSessions(database, weak);
  await database.close();
  handles.pause();
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('run the tests with node --expose-gc (vitest.config.ts sets it)');
  for (let round = 0; round < 6; round += 1) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  handles.stop();
  expect(events).toBeGreaterThanOrEqual(SESSIONS * TURNS * 4);
  expect(weak.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
  expect(handles.open()).toEqual([]);
});
