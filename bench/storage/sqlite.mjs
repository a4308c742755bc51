/**
 * Benchmark of @youyou/sqlite (not a test). Build first, then run from the repository root:
 *
 *   npm run build -w @youyou/agent -w @youyou/sqlite && node --expose-gc bench/storage/sqlite.mjs [--quick]
 *
 * Prints a markdown table: each adapter figure beside a baseline measured in the same run on the same
 * kind of file (WAL, synchronous=NORMAL, a temp folder):
 * - writes: `saveEvent` for one session, one event per call and awaited, as the runtime writes them,
 *   against a bare prepared INSERT (autocommit, JSON.stringify included) per event into a bare table,
 *   in alternating chunks; then, apart, the full-text indexing that saveEvent leaves for idle time;
 * - loads: `loadSession` and `Agent.resumeSession` of a 10,000-event session, against a bare SELECT of the
 *   same rows' payload column and JSON.parse of each.
 * Load figures are medians over rounds after a warm-up round; each load is paired with a baseline taken
 * just before it and the ratio is the median of the pairs' ratios.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AgentBuilder } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { openSqliteStorage } from '@youyou/sqlite';
import Database from 'better-sqlite3';

const quick = process.argv.includes('--quick');
if (globalThis.gc === undefined)
  process.stderr.write('note: run with node --expose-gc for steadier load figures\n');
const WRITE_EVENTS = quick ? 2_000 : 20_000;
const WRITE_CHUNK = 250;
const LOAD_EVENTS = 10_000;
const ROUNDS = quick ? 3 : 15;
const BASE_MS = Date.UTC(2024, 0, 1);

const ASSISTANT_TEXT = 'Here is what I found after reading the file. '.repeat(12);
const TOOL_OUTPUT = 'line of tool output with some code: const x = compute(y);\n'.repeat(35);

/** A realistic log: a session_config, then turns of user → assistant → tool call → result → assistant. */
function makeEvents(count) {
  const events = [
    {
      timestamp: new Date(BASE_MS),
      payload: { type: 'metadata', key: 'session_config', value: { modelId: 'scripted-model' } },
    },
  ];
  for (let index = 1; events.length < count; index += 1) {
    const at = (offset) => new Date(BASE_MS + index * 10 + offset);
    const step = index % 5;
    if (step === 1) {
      events.push({
        timestamp: at(0),
        payload: {
          type: 'user_message',
          content: [{ type: 'text', text: `Please look at file ${index} and tell me what it does.` }],
        },
      });
    } else if (step === 2) {
      events.push({
        timestamp: at(1),
        payload: {
          type: 'assistant_message',
          status: 'complete',
          content: [{ type: 'text', text: `Let me read it. ${index}` }],
        },
      });
    } else if (step === 3) {
      events.push({
        timestamp: at(2),
        payload: {
          type: 'tool_call',
          callId: `call_${index}`,
          toolName: 'read_file',
          arguments: { path: `src/file-${index}.ts`, limit: 400 },
        },
      });
    } else if (step === 4) {
      events.push({
        timestamp: at(3),
        payload: { type: 'tool_result', callId: `call_${index - 1}`, content: TOOL_OUTPUT, isError: false },
      });
    } else {
      events.push({
        timestamp: at(4),
        payload: {
          type: 'assistant_message',
          status: 'complete',
          content: [{ type: 'text', text: `${ASSISTANT_TEXT}${index}` }],
        },
      });
    }
  }
  return events;
}

/** A full GC before a timed section (with --expose-gc), so that one section does not pay for another's garbage. */
function collectGarbage() {
  globalThis.gc?.();
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function bareDatabase(path) {
  const database = new Database(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.exec(
    'CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, session TEXT NOT NULL, timestamp INTEGER NOT NULL, payload TEXT NOT NULL)',
  );
  return database;
}

/**
 * Writes the events in chunks, alternating between the adapter and the bare table, so that a machine
 * busy with something else slows both alike. Then indexes the adapter's backlog of message text (the
 * work saveEvent leaves for later) and times that separately.
 */
async function measureWrites(folder, events) {
  const storage = await openSqliteStorage(join(folder, 'adapter-write.db'));
  const database = bareDatabase(join(folder, 'bare-write.db'));
  const insert = database.prepare('INSERT INTO events (session, timestamp, payload) VALUES (?, ?, ?)');
  let adapterMs = 0;
  let baselineMs = 0;
  for (let offset = 0; offset < events.length; offset += WRITE_CHUNK) {
    const chunk = events.slice(offset, offset + WRITE_CHUNK);
    let start = performance.now();
    for (const event of chunk) await storage.sessions.saveEvent('bench', event);
    adapterMs += performance.now() - start;
    start = performance.now();
    for (const event of chunk) insert.run('bench', event.timestamp.getTime(), JSON.stringify(event.payload));
    baselineMs += performance.now() - start;
  }
  const start = performance.now();
  const indexed = await storage.sessions.flushSearchIndex();
  const indexMs = performance.now() - start;
  await storage.close();
  database.close();
  return { adapterMs, baselineMs, indexMs, indexed };
}

async function measureLoads(path, sessionId) {
  const storage = await openSqliteStorage(path);
  const provider = new ScriptedModelProvider();
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', onBackgroundError: () => {} })
    .registerModelProvider(provider)
    .registerSessionStorage(storage.sessions)
    .registerMemoryStorage(storage.memories)
    .build();
  const bare = new Database(path, { readonly: true });
  // The same rows the adapter reads: the session's range of event ids (see event-keys.ts).
  const key = bare.prepare('SELECT id FROM sessions WHERE session_id = ?').pluck().get(sessionId);
  const select = bare.prepare('SELECT payload FROM events WHERE id BETWEEN ? AND ? ORDER BY id');
  const range = [key * 2 ** 24 + 1, key * 2 ** 24 + 2 ** 24 - 1];
  const samples = { load: [], resume: [], runtime: [], baseline: [], loadRatio: [], resumeRatio: [] };
  const timeBaseline = () => {
    collectGarbage();
    const start = performance.now();
    const parsed = select.all(...range).map((row) => JSON.parse(row.payload));
    if (parsed.length !== LOAD_EVENTS) throw new Error(`selected ${parsed.length} rows`);
    return performance.now() - start;
  };
  for (let round = 0; round <= ROUNDS; round += 1) {
    // Each adapter figure is paired with a baseline taken just before it, so a busy machine slows both.
    const loadBaselineMs = timeBaseline();
    collectGarbage();
    let start = performance.now();
    const loaded = await storage.sessions.loadSession(sessionId);
    const loadMs = performance.now() - start;
    if (loaded.length !== LOAD_EVENTS) throw new Error(`loaded ${loaded.length} events`);

    const resumeBaselineMs = timeBaseline();
    collectGarbage();
    start = performance.now();
    const session = await agent.resumeSession(sessionId);
    const resumeMs = performance.now() - start;
    await session.close();

    if (round === 0) continue; // warm-up
    samples.load.push(loadMs);
    samples.resume.push(resumeMs);
    samples.runtime.push(resumeMs - loadMs);
    samples.baseline.push(loadBaselineMs, resumeBaselineMs);
    samples.loadRatio.push(loadMs / loadBaselineMs);
    samples.resumeRatio.push(resumeMs / resumeBaselineMs);
  }
  await agent.shutdown();
  bare.close();
  await storage.close();
  return {
    loadMs: median(samples.load),
    resumeMs: median(samples.resume),
    runtimeMs: median(samples.runtime),
    baselineMs: median(samples.baseline),
    loadRatio: median(samples.loadRatio),
    resumeRatio: median(samples.resumeRatio),
  };
}

const folder = await mkdtemp(join(tmpdir(), 'youyou-bench-sqlite-'));
try {
  // A warm-up run (JIT, page cache), then the measured one.
  await measureWrites(folder, makeEvents(WRITE_CHUNK * 2));
  await rm(join(folder, 'adapter-write.db'), { force: true });
  await rm(join(folder, 'bare-write.db'), { force: true });
  const writes = await measureWrites(folder, makeEvents(WRITE_EVENTS));

  const loadPath = join(folder, 'load.db');
  const storage = await openSqliteStorage(loadPath);
  const loadEvents = makeEvents(LOAD_EVENTS);
  for (let index = 0; index < loadEvents.length; index += 1_000) {
    await storage.sessions.saveEvents('long-session', loadEvents.slice(index, index + 1_000));
  }
  await storage.close();
  const loads = await measureLoads(loadPath, 'long-session');

  const perSecond = (count, ms) => Math.round((count / ms) * 1000).toLocaleString('en-US');
  const ratio = (value, baseline) => `${(value / baseline).toFixed(2)}x`;
  const lines = [
    `SQLite storage benchmark — Node ${process.version}, ${process.platform}/${process.arch}, loads: median of ${ROUNDS} rounds`,
    '',
    '| measure | @youyou/sqlite | baseline | ratio | goal |',
    '|---|---|---|---|---|',
    `| saveEvent, one session, ${WRITE_EVENTS.toLocaleString('en-US')} events one per call | ${perSecond(WRITE_EVENTS, writes.adapterMs)} events/s (${((writes.adapterMs / WRITE_EVENTS) * 1000).toFixed(1)} µs/event) | ${perSecond(WRITE_EVENTS, writes.baselineMs)} events/s (bare INSERT, ${((writes.baselineMs / WRITE_EVENTS) * 1000).toFixed(1)} µs/event) | ${ratio(writes.adapterMs, writes.baselineMs)} | ≤ 2x |`,
    `| the same + the deferred search indexing of its ${writes.indexed.toLocaleString('en-US')} messages (${writes.indexMs.toFixed(0)} ms, off the write path) | ${perSecond(WRITE_EVENTS, writes.adapterMs + writes.indexMs)} events/s | ${perSecond(WRITE_EVENTS, writes.baselineMs)} events/s | ${ratio(writes.adapterMs + writes.indexMs, writes.baselineMs)} | — |`,
    `| loadSession, ${LOAD_EVENTS.toLocaleString('en-US')} events | ${loads.loadMs.toFixed(1)} ms | ${loads.baselineMs.toFixed(1)} ms (bare SELECT + JSON.parse) | ${loads.loadRatio.toFixed(2)}x | ≤ 1.5x |`,
    `| Agent.resumeSession, ${LOAD_EVENTS.toLocaleString('en-US')} events | ${loads.resumeMs.toFixed(1)} ms | ${loads.baselineMs.toFixed(1)} ms (bare SELECT + JSON.parse) | ${loads.resumeRatio.toFixed(2)}x | ≤ 1.5x |`,
    `| of which the runtime's own work (resume − load: replay, context, memories) | ≈ ${loads.runtimeMs.toFixed(1)} ms | | | |`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await rm(folder, { recursive: true, force: true });
}
