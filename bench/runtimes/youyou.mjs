import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * @youyou/agent, from the built dist of packages/agent, through its public API only: hooks (a plugin
 * tapping TurnStart, TurnEnd, BeforeToolUse and AfterToolUse with async no-op handlers), persistence (an
 * InMemorySessionStorage written through the public `saveEvent` port, or `@youyou/sqlite` in W5), async
 * tools with a JSON schema (validated), token accounting (usage in every answer).
 */
import {
  answerPlans,
  callArguments,
  callId,
  ECHO_TOOL,
  neutralHistory,
  PARALLEL_DELAY_MS,
  USAGE,
  USER_TEXT,
  WAIT_TOOL,
} from '../lib/workloads.mjs';

// BENCH_YOUYOU_DIST points at another build of the package (an absolute path to its dist/index.js), to
// compare two versions of the runtime side by side.
const { AgentBuilder, InMemorySessionStorage } = await import(
  process.env.BENCH_YOUYOU_DIST ?? '../../packages/agent/dist/index.js'
);

export const name = '@youyou/agent';

const MODEL = {
  id: 'fake-model',
  displayName: 'Fake model',
  contextWindow: 10_000_000,
  capabilities: { toolUse: true, vision: false, streaming: true },
};
const usageEvent = { type: 'usage', usage: USAGE };

/** A ModelProvider whose chat() yields pre-built ChatEvents: answer `i` of the turn is `answers[i]`. */
class ReplayProvider {
  id = 'replay';
  models = [MODEL];
  answers = [];
  next = 0;
  load(answers) {
    this.answers = answers;
    this.next = 0;
  }
  chat() {
    const events = this.answers[this.next++];
    if (events === undefined) throw new Error('the fake model has no answer left');
    return replay(events);
  }
}

async function* replay(events) {
  for (const event of events) yield event;
}

function textAnswer(deltas) {
  return [
    ...deltas.map((text) => ({ type: 'text_delta', text })),
    usageEvent,
    { type: 'done', stopReason: 'end_turn' },
  ];
}

function toolAnswer(toolName, calls) {
  return [
    ...calls.map((index) => ({
      type: 'tool_call',
      callId: callId(index),
      toolName,
      arguments: callArguments(index),
    })),
    usageEvent,
    { type: 'done', stopReason: 'tool_use' },
  ];
}

const asyncNoop = async () => undefined;
const hooksPlugin = {
  id: 'bench-hooks',
  displayName: 'Bench hooks',
  description: 'Taps the turn and tool hooks with async handlers that do nothing.',
  initialize: async () => undefined,
  apply(context) {
    for (const event of ['TurnStart', 'TurnEnd', 'BeforeToolUse', 'AfterToolUse'])
      context.tap(event, asyncNoop);
  },
  shutdown: async () => undefined,
};

let inFlight = 0;
let maxInFlight = 0;
const echoTool = {
  name: ECHO_TOOL.name,
  description: ECHO_TOOL.description,
  parametersSchema: ECHO_TOOL.schema,
  isMutating: false,
  execute: async ({ arguments: args }) => ({ content: ECHO_TOOL.run(args.n), isError: false }),
};
const waitTool = {
  name: WAIT_TOOL.name,
  description: WAIT_TOOL.description,
  parametersSchema: WAIT_TOOL.schema,
  isMutating: false,
  execute: async ({ arguments: args }) => {
    inFlight++;
    if (inFlight > maxInFlight) maxInFlight = inFlight;
    await new Promise((resolve) => setTimeout(resolve, PARALLEL_DELAY_MS));
    inFlight--;
    return { content: ECHO_TOOL.run(args.n), isError: false };
  },
};

async function buildAgent(storage) {
  const provider = new ReplayProvider();
  // BENCH_YOUYOU_BARE=1 leaves the hooks and the storage out (=hooks or =storage only that one): for finding
  // where the time goes, not for the table.
  const bare = process.env.BENCH_YOUYOU_BARE ?? '';
  const builder = new AgentBuilder({ defaultModel: MODEL.id, maxToolCallsPerTurn: 1_000 })
    .registerModelProvider(provider)
    .registerTool(echoTool)
    .registerTool(waitTool);
  if (bare !== '1' && bare !== 'hooks') builder.registerPlugin(hooksPlugin);
  if (bare !== '1' && bare !== 'storage') builder.registerSessionStorage(storage);
  const agent = await builder.build();
  return { agent, provider, storage };
}

/**
 * The in-memory storage as a host's own storage: every write goes through the public `saveEvent` (a core
 * that looks for an InMemorySessionStorage to write it by a private synchronous path, as the core of
 * 2026-12-03 did, does not take that path for a subclass that overrides `saveEvent`). Costs one call.
 */
class PortSessionStorage extends InMemorySessionStorage {
  saveEvent(sessionId, event) {
    return super.saveEvent(sessionId, event);
  }
}

let shared;
/** One agent per process, as a host would keep it; each run is a new session. */
async function sharedAgent() {
  shared ??= await buildAgent(new PortSessionStorage());
  return shared;
}

/** Runs one turn in `session` and reads every event; times from sendMessage to the last event. */
async function timedTurn(session) {
  let text = '';
  let toolCalls = 0;
  let firstMs;
  const started = performance.now();
  const turn = await session.sendMessage(USER_TEXT);
  for await (const event of turn) {
    const payload = event.payload;
    if (payload.type === 'text_delta') {
      if (firstMs === undefined) firstMs = performance.now() - started;
      text += payload.text;
    } else if (payload.type === 'tool_call_end') toolCalls++;
    else if (payload.type === 'error') throw payload.error;
  }
  const ms = performance.now() - started;
  return { ms, firstMs, text, toolCalls };
}

/** Runs one turn in a new session; the session is closed and deleted after it, so runs do not pile up. */
async function inNewSession(setup, answers) {
  const { agent, provider, storage } = setup;
  const session = await agent.newSession();
  provider.load(answers);
  try {
    return await timedTurn(session);
  } finally {
    await session.close();
    await storage.deleteSession(session.id);
  }
}

const {
  stream: streamAnswers,
  toolLoop: toolLoopAnswers,
  parallel: parallelAnswers,
  short: shortAnswers,
} = answerPlans({ textAnswer, toolAnswer });

/** W4's history as session events, saved under a new session id before each measured run. */
function historyEvents() {
  const events = [];
  const timestamp = new Date();
  events.push({
    timestamp,
    payload: { type: 'metadata', key: 'session_config', value: { modelId: MODEL.id } },
  });
  for (const item of neutralHistory()) {
    switch (item.kind) {
      case 'user':
        events.push({
          timestamp,
          payload: { type: 'user_message', content: [{ type: 'text', text: item.text }] },
        });
        break;
      case 'assistant':
        events.push({
          timestamp,
          payload: {
            type: 'assistant_message',
            content: [{ type: 'text', text: item.text }],
            status: 'complete',
          },
        });
        break;
      case 'tool_call':
        events.push({
          timestamp,
          payload: {
            type: 'tool_call',
            callId: item.callId,
            toolName: item.toolName,
            arguments: { n: item.n },
          },
        });
        break;
      case 'tool_result':
        events.push({
          timestamp,
          payload: { type: 'tool_result', callId: item.callId, content: item.text, isError: false },
        });
        break;
    }
  }
  return events;
}
const savedHistory = historyEvents();
let historyRuns = 0;

/** W5: the SQLite storage of packages/sqlite (its built dist), in a file of a temporary directory. */
let durable;
async function durableAgent() {
  if (durable !== undefined) return durable;
  let sqlite;
  try {
    // BENCH_YOUYOU_SQLITE_DIST points at another build of @youyou/sqlite (its dist/index.js), as compare.mjs does.
    sqlite = await import(process.env.BENCH_YOUYOU_SQLITE_DIST ?? '../../packages/sqlite/dist/index.js');
  } catch {
    durable = null;
    return durable;
  }
  const directory = mkdtempSync(join(tmpdir(), 'youyou-bench-'));
  const database = await sqlite.openSqliteStorage(join(directory, 'sessions.db'));
  const setup = await buildAgent(database.sessions);
  durable = { ...setup, database, directory };
  return durable;
}

/** Closes the SQLite file and removes its directory. */
export async function close() {
  if (!durable) return;
  await durable.agent.shutdown();
  await durable.database.close();
  rmSync(durable.directory, { recursive: true, force: true });
}

export const workloads = {
  async stream() {
    return inNewSession(await sharedAgent(), streamAnswers);
  },
  async toolLoop() {
    return inNewSession(await sharedAgent(), toolLoopAnswers);
  },
  async parallel() {
    maxInFlight = 0;
    const result = await inNewSession(await sharedAgent(), parallelAnswers);
    return { ...result, maxInFlight };
  },
  async durableAvailable() {
    return (await durableAgent()) !== null;
  },
  async durable() {
    return inNewSession(await durableAgent(), toolLoopAnswers);
  },
  async history(withHistory) {
    const setup = await sharedAgent();
    if (!withHistory) return inNewSession(setup, shortAnswers);
    const sessionId = `history-${historyRuns++}`;
    for (const event of savedHistory) await setup.storage.saveEvent(sessionId, event);
    const session = await setup.agent.resumeSession(sessionId);
    setup.provider.load(shortAnswers);
    try {
      return await timedTurn(session);
    } finally {
      await session.close();
      await setup.storage.deleteSession(sessionId);
    }
  },
};
