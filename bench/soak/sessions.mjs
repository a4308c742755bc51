/**
 * The in-process soak of issue 25: `node bench/soak/sessions.mjs [--storage memory|sqlite] [--sessions 1000]
 * [--turns 10] [--every 100]` runs that many sessions of that many turns one after another on one Agent (the
 * built dist of packages/agent), each turn one tool call and a streamed answer, with a plugin tapping the turn
 * and tool hooks and an observer. Every `--every` sessions it runs a full gc and records RSS and the V8 heap;
 * after the first block and at the end it takes a heap snapshot and counts the runtime's objects in it.
 * Prints a markdown table (RSS against turns) and the verdict; exits 1 when the goal is missed.
 *
 * Goal: RSS after a full gc at the end within 10 MB of RSS after the first 100 sessions, and no Session, turn,
 * event channel, abort signal or timer of a closed session (nor, on SQLite, the storage's state of it) in the
 * last snapshot.
 *
 * In memory each closed session is deleted from the storage (what it holds is data, not a leak); on SQLite
 * the sessions stay in the file, as a server keeps them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  return index === -1 ? fallback : args[index + 1];
};

if (globalThis.gc === undefined) {
  // A full gc is part of the measure: run again with it exposed.
  const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...args], {
    stdio: 'inherit',
  });
  process.exit(child.status ?? 1);
}

const storageKind = option('--storage', 'memory');
const SESSIONS = Number(option('--sessions', '1000'));
const TURNS = Number(option('--turns', '10'));
const EVERY = Number(option('--every', '100'));
const LIMIT_MB = 10;

const { AgentBuilder, InMemorySessionStorage } = await import('../../packages/agent/dist/index.js');

const MODEL = {
  id: 'soak-model',
  displayName: 'Soak model',
  contextWindow: 1_000_000,
  capabilities: { toolUse: true, vision: false, streaming: true },
};
const USAGE = { type: 'usage', usage: { inputTokens: 100, outputTokens: 20 } };

/** Answers a tool call first, and a streamed text once the tool's result is the last message. */
const provider = {
  id: 'soak',
  models: [MODEL],
  async *chat(request) {
    const last = request.messages.at(-1);
    if (last?.type === 'tool_result') {
      for (let index = 0; index < 20; index++) yield { type: 'text_delta', text: `word${index} ` };
      yield USAGE;
      yield { type: 'done', stopReason: 'end_turn' };
      return;
    }
    yield {
      type: 'tool_call',
      callId: `call-${request.messages.length}`,
      toolName: 'lookup',
      arguments: `{"key":"k${request.messages.length}"}`,
    };
    yield USAGE;
    yield { type: 'done', stopReason: 'tool_use' };
  },
};

const lookupTool = {
  name: 'lookup',
  description: 'Looks a key up.',
  parametersSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  isMutating: false,
  execute: async ({ arguments: input }) => ({ content: `value of ${input.key}`, isError: false }),
};

const hooksPlugin = {
  id: 'soak-hooks',
  displayName: 'Soak hooks',
  description: 'Async no-op hooks and an observer, as a host with telemetry has.',
  initialize: async () => undefined,
  apply(context) {
    for (const event of ['TurnStart', 'TurnEnd', 'BeforeToolUse', 'AfterToolUse'])
      context.tap(event, async () => undefined);
    context.observe(() => undefined);
  },
  shutdown: async () => undefined,
};

let directory;
let database;
let storage;
if (storageKind === 'sqlite') {
  const sqlite = await import('../../packages/sqlite/dist/index.js');
  directory = mkdtempSync(join(tmpdir(), 'youyou-soak-'));
  database = await sqlite.openSqliteStorage(join(directory, 'sessions.db'));
  storage = database.sessions;
} else storage = new InMemorySessionStorage();

const agent = await new AgentBuilder({ defaultModel: MODEL.id })
  .registerModelProvider(provider)
  .registerTool(lookupTool)
  .registerPlugin(hooksPlugin)
  .registerSessionStorage(storage)
  .build();

const weak = { sessions: [], turns: [] };

async function oneSession(index) {
  const session = await agent.newSession();
  weak.sessions.push(new WeakRef(session));
  for (let turnIndex = 0; turnIndex < TURNS; turnIndex++) {
    const turn = await session.sendMessage(`question ${turnIndex} of session ${index}`);
    weak.turns.push(new WeakRef(turn));
    let calls = 0;
    for await (const event of turn) {
      if (event.payload.type === 'tool_call_end') calls++;
      else if (event.payload.type === 'error') throw event.payload.error;
    }
    if (calls !== 1) throw new Error(`turn ${turnIndex} of session ${index} made ${calls} tool calls`);
  }
  await session.close();
  if (storageKind === 'memory') await storage.deleteSession(session.id);
}

async function fullGc() {
  for (let round = 0; round < 4; round++) {
    await new Promise((resolve) => setImmediate(resolve));
    globalThis.gc();
  }
}

/** The runtime's objects in a heap snapshot, counted by constructor name. */
const COUNTED = [
  'Session',
  'SessionController',
  'SessionState',
  'RunningTurn',
  'EventChannel',
  'SteeringInbox',
  'ToolBatch',
  'SessionLog',
  'KnownSessionState',
  'AbortController',
  'AbortSignal',
  'Timeout',
];
/**
 * Writes a heap snapshot and counts the runtime's objects in it by constructor name. The snapshot is read in a
 * child process: parsing it here would grow this process's RSS, the figure being measured.
 */
function countInSnapshot() {
  const file = v8.writeHeapSnapshot(join(tmpdir(), `youyou-soak-${process.pid}-${Date.now()}.heapsnapshot`));
  try {
    const counter = fileURLToPath(new URL('./count-snapshot.mjs', import.meta.url));
    const child = spawnSync(process.execPath, [counter, file, ...COUNTED], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`count-snapshot failed: ${child.stderr}`);
    return JSON.parse(child.stdout);
  } finally {
    rmSync(file, { force: true });
  }
}

const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);
/**
 * The pages of V8's young generation (new space) the process has touched. V8 grows it up to twice
 * --max-semi-space-size (32 MB on 64-bit Node 20) as objects survive scavenges, and never gives it back while
 * the process allocates at speed, so it shows in RSS as a one-off step (bench/README.md, "Soaks").
 */
const youngGenerationBytes = () =>
  v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;
// Before any session, on request: what the agent and the storage hold by themselves (a storage's idle timer,
// say). Off by default, since the snapshot's own memory would sit in the RSS series.
const startCounts = args.includes('--snapshot-start') ? countInSnapshot() : undefined;
const rows = [];
let firstBlock;
let firstCounts;
const started = Date.now();
for (let index = 0; index < SESSIONS; index++) {
  await oneSession(index);
  const done = index + 1;
  if (done % EVERY !== 0 && done !== SESSIONS) continue;
  await fullGc();
  const memory = process.memoryUsage();
  const row = {
    sessions: done,
    turns: done * TURNS,
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    heapTotal: memory.heapTotal,
    external: memory.external,
    arrayBuffers: memory.arrayBuffers,
    youngGeneration: youngGenerationBytes(),
  };
  rows.push(row);
  if (firstBlock === undefined) {
    firstBlock = row;
    // A heap snapshot grows RSS by tens of MB for good (V8's snapshot graph; malloc keeps the pages), so the
    // one after the first block is taken only on request, in a run whose RSS series is not the measure.
    if (args.includes('--snapshot-first')) firstCounts = countInSnapshot();
  }
  process.stderr.write(
    `${done} sessions: RSS ${mb(row.rss)} MB, heap ${mb(row.heapUsed)}/${mb(row.heapTotal)} MB, young generation ${mb(row.youngGeneration)} MB, external ${mb(row.external)} MB\n`,
  );
}
const seconds = (Date.now() - started) / 1000;
const lastCounts = countInSnapshot();
await fullGc();
const aliveSessions = weak.sessions.filter((ref) => ref.deref() !== undefined).length;
const aliveTurns = weak.turns.filter((ref) => ref.deref() !== undefined).length;
await agent.shutdown();
if (database !== undefined) {
  await database.close();
  rmSync(directory, { recursive: true, force: true });
}

const last = rows.at(-1);
const growth = (last.rss - firstBlock.rss) / 2 ** 20;
const youngGrowth = (last.youngGeneration - firstBlock.youngGeneration) / 2 ** 20;
const restGrowth = growth - youngGrowth;
// A closed session's own objects must all be gone; the generic ones (signals, timers) are compared with what
// the agent held before its first session when that snapshot was taken.
const SESSION_CLASSES = COUNTED.slice(0, 9);
const leftovers = COUNTED.filter((name) =>
  SESSION_CLASSES.includes(name)
    ? lastCounts[name] > 0
    : lastCounts[name] > (startCounts?.[name] ?? Infinity),
);
const met = growth <= LIMIT_MB && leftovers.length === 0 && aliveSessions === 0 && aliveTurns === 0;
const lines = [
  `### ${SESSIONS.toLocaleString('en')} sessions × ${TURNS} turns, ${storageKind === 'sqlite' ? 'SQLite (`@youyou/sqlite`, one file)' : 'in memory'}`,
  '',
  `${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC · Node ${process.version} · ${seconds.toFixed(0)} s · load average ${(
    await import('node:os')
  )
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(
      ' ',
    )} at the end${process.env.MALLOC_ARENA_MAX === undefined ? '' : ` · MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX}`}`,
  '',
  '| sessions | turns | RSS MB (after full gc) | V8 heap used MB | V8 heap total MB | V8 young generation MB (touched) | external MB | array buffers MB |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (row) =>
      `| ${row.sessions} | ${row.turns} | ${mb(row.rss)} | ${mb(row.heapUsed)} | ${mb(row.heapTotal)} | ${mb(row.youngGeneration)} | ${mb(row.external)} | ${mb(row.arrayBuffers)} |`,
  ),
  '',
  `RSS growth from ${firstBlock.sessions} sessions to the end: ${growth.toFixed(1)} MB (goal ≤ ${LIMIT_MB}), of which V8's young generation ${youngGrowth >= 0 ? '+' : ''}${youngGrowth.toFixed(1)} MB and the rest ${restGrowth >= 0 ? '+' : ''}${restGrowth.toFixed(1)} MB. WeakRefs still alive after a full gc: ${aliveSessions} of ${weak.sessions.length} sessions, ${aliveTurns} of ${weak.turns.length} turns.`,
  '',
  '| objects in the heap snapshot | before the first session | after the first block | at the end |',
  '|---|---:|---:|---:|',
  ...COUNTED.map(
    (name) =>
      `| ${name} | ${startCounts?.[name] ?? '(not taken)'} | ${firstCounts?.[name] ?? '(not taken)'} | ${lastCounts[name]} |`,
  ),
  '',
  `Goal ${met ? '**met**' : '**missed**'}${leftovers.length > 0 ? ` (left in the heap: ${leftovers.join(', ')})` : ''}.`,
];
process.stdout.write(`${lines.join('\n')}\n`);
process.exit(met ? 0 : 1);
