/**
 * The `youyou serve` soak of issue 25: `node bench/soak/serve.mjs [--turns 10000] [--clients 50]
 * [--session-turns 10] [--disconnect-every 10]` starts the built CLI (`packages/cli/dist/bin.js serve`,
 * SQLite in a temporary YOUYOU_HOME) against an OpenAI-compatible model server on 127.0.0.1 and drives it
 * with that many concurrent HTTP clients. Each client opens a session, sends `--session-turns` turns in it
 * (reading each turn's SSE stream to its end), then opens the next; every `--disconnect-every`th turn of a
 * client is dropped after its first delta (the client aborts the request mid-turn). Finished sessions are
 * closed by the server's idle timer (server.idleSessionMs 1000), and their events are dropped from its memory
 * after server.journalRetentionMs (`--journal-retention-ms`, default here 5000; 0 keeps the server's 15 min).
 *
 * Every 500 turns the server's RSS is sampled as the OS sees it (/proc), then after a full gc that the bench
 * asks for through gc-probe.cjs (a signal handler loaded with --require: the runtime never forces a gc; the
 * measure does, because RSS without it follows V8's lazy heap sizing, not what is retained), with the
 * server's node run with --no-concurrent-sweeping so that the gc has given back what it freed when it returns
 * (see NODE_FLAGS). Each sample also splits the RSS by mapping (/proc/PID/smaps: glibc's main and thread
 * arenas, other anonymous memory against the V8 heap's total, files); glibc's MALLOC_* settings and
 * GLIBC_TUNABLES in the bench's environment are passed on to the server; SOAK_DEBUG=1 prints each sample's
 * split to stderr as it is taken.
 * After the clients go, it waits for the server's open sockets to fall back to what it had before the load
 * (the listening socket) and reports them. Prints a markdown table; exits 1 when RSS after the warm-up
 * (the first 1,000 turns) grows by more than 10 MB or a socket stays open.
 */
import { spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  heapColumns,
  MALLOC_ENV,
  MALLOC_NOTE,
  PROBE_ARGS,
  probeAfterGc,
  rssOf,
  startModelServer,
} from './model-server.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  return Number(index === -1 ? fallback : args[index + 1]);
};
const TURNS = option('--turns', 10_000);
const CLIENTS = option('--clients', 50);
const SESSION_TURNS = option('--session-turns', 10);
const DISCONNECT_EVERY = option('--disconnect-every', 10);
const SAMPLE_EVERY = option('--sample-every', 500);
const WARM_UP = option('--warm-up', 1_000);
// How long the server keeps a closed session's events for streams that reconnect: 0 leaves its default
// (15 min), which is longer than this soak, so that run's RSS holds every event it relayed.
const JOURNAL_RETENTION_MS = option('--journal-retention-ms', 5_000);
const LIMIT_MB = 10;
const TOKEN = 'soak-token-0123456789abcdef';
const BIN = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));

/** How many sockets the process holds open (its file descriptors that are sockets). */
function socketsOf(pid) {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count++;
    } catch {
      // closed while we looked
    }
  }
  return count;
}

const ARENA_BYTES = 64 * 2 ** 20;
// The server's node runs with --no-concurrent-sweeping, part of the instrument like --expose-gc: with it
// the probe's gc sweeps and gives the pages it freed back to the OS before it returns. With V8's default a
// background job releases them (~33 MB here, the young generation's) at a moment of its own, and each sample
// read RSS before or after that job by chance: spreads of 12–36 MB set by single low samples. Flags in
// SOAK_NODE_FLAGS (space-separated) come after it (`--concurrent-sweeping` puts V8's default back).
const NODE_FLAGS = [
  '--no-concurrent-sweeping',
  ...(process.env.SOAK_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== ''),
];
// glibc's malloc settings other than MALLOC_ARENA_MAX (model-server.mjs passes that one), passed on to the
// server when the bench runs with them, to see how its allocator's trimming moves RSS.
const GLIBC_TUNING = Object.fromEntries(
  ['MALLOC_TRIM_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_MMAP_THRESHOLD_', 'GLIBC_TUNABLES']
    .filter((name) => process.env[name] !== undefined)
    .map((name) => [name, process.env[name]]),
);

/**
 * The process's resident memory by kind of mapping, from /proc/PID/smaps: `brk` (glibc's main arena, the
 * [heap] mapping), `arenas` (glibc's thread arenas: a read-write mapping at a 64 MB-aligned address whose
 * reservation, with the inaccessible rest after it, spans 64 MB), `files` (the binary, libraries and other
 * files), `stack` (the main thread's) and `anon` (every other anonymous mapping: the V8 heap's pages, its
 * code, threads' stacks and malloc's large chunks), plus the count of thread arenas.
 */
function residentByMapping(pid) {
  const parts = { total: 0, brk: 0, arenas: 0, arenaCount: 0, files: 0, stack: 0, anon: 0 };
  const mappings = [];
  let current;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      current = {
        start: Number.parseInt(header[1], 16),
        end: Number.parseInt(header[2], 16),
        perms: header[3],
        path: header[4],
        rss: 0,
      };
      mappings.push(current);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && current) current.rss = Number(rss[1]) * 1024;
    const lazy = /^(LazyFree|AnonHugePages):\s+(\d+) kB/.exec(line);
    if (lazy) parts[lazy[1]] = (parts[lazy[1]] ?? 0) + Number(lazy[2]) * 1024;
  }
  mappings.forEach((mapping, index) => {
    parts.total += mapping.rss;
    if (mapping.path === '[heap]') parts.brk += mapping.rss;
    else if (mapping.path === '[stack]') parts.stack += mapping.rss;
    else if (mapping.path.startsWith('/')) parts.files += mapping.rss;
    else if (mapping.path !== '') parts.anon += mapping.rss;
    else {
      const next = mappings[index + 1];
      const reservedEnd =
        next !== undefined && next.start === mapping.end && next.perms === '---p' && next.path === ''
          ? next.end
          : mapping.end;
      const isArena =
        mapping.perms === 'rw-p' &&
        mapping.start % ARENA_BYTES === 0 &&
        reservedEnd - mapping.start === ARENA_BYTES;
      if (isArena) {
        parts.arenas += mapping.rss;
        parts.arenaCount++;
      } else parts.anon += mapping.rss;
    }
  });
  return parts;
}

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

async function newSession(url) {
  for (;;) {
    const response = await fetch(`${url}/sessions`, { method: 'POST', headers: auth, body: '{}' });
    if (response.status === 201) return (await response.json()).sessionId;
    await response.text();
    if (response.status !== 429) throw new Error(`POST /sessions: ${response.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One turn: reads its SSE stream to the end, or aborts after the first delta when `drop`. */
async function turn(url, sessionId, text, drop) {
  for (;;) {
    const controller = new AbortController();
    const response = await fetch(`${url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ content: text }),
      signal: controller.signal,
    });
    if (response.status === 409 || response.status === 429) {
      // The dropped turn before this one is still running on the server (409 TURN_BUSY), or no slot is free.
      await response.text();
      await new Promise((resolve) => setTimeout(resolve, 20));
      continue;
    }
    if (response.status !== 200)
      throw new Error(`POST messages: ${response.status} ${await response.text()}`);
    const decoder = new TextDecoder();
    let seen = '';
    try {
      for await (const chunk of response.body) {
        seen += decoder.decode(chunk, { stream: true });
        if (drop && seen.includes('text_delta')) {
          controller.abort();
          return 'dropped';
        }
      }
    } catch (error) {
      if (drop && error.name === 'AbortError') return 'dropped';
      throw error;
    }
    if (!seen.includes('turn_complete'))
      throw new Error(`a turn ended without turn_complete: ${seen.slice(-300)}`);
    return 'complete';
  }
}

const home = mkdtempSync(join(os.tmpdir(), 'youyou-serve-soak-'));
mkdirSync(join(home, 'home'));
mkdirSync(join(home, 'workspace'));
writeFileSync(
  join(home, 'home', 'config.json'),
  JSON.stringify({
    server: {
      idleSessionMs: 1_000,
      maxActiveSessions: 200,
      ...(JOURNAL_RETENTION_MS === 0 ? {} : { journalRetentionMs: JOURNAL_RETENTION_MS }),
    },
  }),
);
const probeFile = join(home, 'probe.json');
const model = await startModelServer();
const baseURL = `http://127.0.0.1:${model.address().port}/v1`;
const child = spawn(
  process.execPath,
  [
    ...NODE_FLAGS,
    ...PROBE_ARGS,
    BIN,
    'serve',
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--base-url',
    baseURL,
    '--no-web-chat',
  ],
  {
    cwd: join(home, 'workspace'),
    env: {
      PATH: process.env.PATH,
      HOME: home,
      YOUYOU_HOME: join(home, 'home'),
      SHELL: '/bin/sh',
      OPENAI_API_KEY: 'soak-key',
      YOUYOU_SERVER_TOKENS: `${TOKEN}=soak`,
      SOAK_PROBE_FILE: probeFile,
      ...MALLOC_ENV,
      ...GLIBC_TUNING,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
let stdout = '';
let stderr = '';
child.stdout.setEncoding('utf8').on('data', (text) => {
  stdout += text;
});
child.stderr.setEncoding('utf8').on('data', (text) => {
  stderr += text;
});
const url = await new Promise((resolve, reject) => {
  const timer = setInterval(() => {
    const match = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
    if (match) {
      clearInterval(timer);
      resolve(match[1]);
    } else if (child.exitCode !== null) {
      clearInterval(timer);
      reject(new Error(`youyou serve exited: ${stderr}`));
    }
  }, 25);
});

const socketsBefore = socketsOf(child.pid);
const started = Date.now();
/** RSS as the OS sees it now, then RSS and the V8 heap after a full gc (gc-probe.cjs). */
async function sample(turns) {
  const rss = rssOf(child.pid);
  const afterGc = await probeAfterGc(child.pid, probeFile);
  const mappings = residentByMapping(child.pid);
  return {
    mappings,
    turns,
    rss,
    rssAfterGc: afterGc.rss,
    heapUsed: afterGc.heapUsed,
    afterGc,
    sockets: socketsOf(child.pid),
  };
}
const samples = [await sample(0)];
let issued = 0;
let finished = 0;
let dropped = 0;
let nextSample = SAMPLE_EVERY;

async function client(index) {
  let clientTurns = 0;
  while (issued < TURNS) {
    const sessionId = await newSession(url);
    for (let inSession = 0; inSession < SESSION_TURNS && issued < TURNS; inSession++) {
      issued++;
      clientTurns++;
      const drop = DISCONNECT_EVERY > 0 && clientTurns % DISCONNECT_EVERY === 0;
      const outcome = await turn(url, sessionId, `client ${index} turn ${clientTurns}`, drop);
      if (outcome === 'dropped') dropped++;
      finished++;
      if (finished >= nextSample) {
        nextSample += SAMPLE_EVERY;
        samples.push(await sample(finished));
        process.stderr.write(
          `${finished} turns: RSS after gc ${(samples.at(-1).rssAfterGc / 2 ** 20).toFixed(1)} MB ${process.env.SOAK_DEBUG ? JSON.stringify(samples.at(-1).mappings) : ''}\n`,
        );
      }
    }
  }
}

await Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(index)));
const seconds = (Date.now() - started) / 1000;
// The clients are gone: wait (a state, polled) for the server's sockets to fall back to the listening one.
let socketsAfter = socketsOf(child.pid);
for (let waited = 0; socketsAfter > socketsBefore && waited < 60_000; waited += 250) {
  await new Promise((resolve) => setTimeout(resolve, 250));
  socketsAfter = socketsOf(child.pid);
}
const gone = await sample('clients gone');
// Then past the idle close and the journal retention: what a quiet server still holds.
if (JOURNAL_RETENTION_MS > 0)
  await new Promise((resolve) => setTimeout(resolve, JOURNAL_RETENTION_MS + 2_000));
const idle = await sample('quiet, after the retention');
child.kill('SIGTERM');
await new Promise((resolve) => child.once('close', resolve));
model.close();
rmSync(home, { recursive: true, force: true });

const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);
const mappingColumns = ({ mappings, afterGc }) =>
  `${mb(mappings.total)} | ${mb(mappings.brk)} | ${mb(mappings.arenas)} (${mappings.arenaCount}) | ${mb(mappings.anon)} | ${mb(mappings.anon - afterGc.heapTotal)} | ${mb(mappings.files)}`;
const afterWarmUp = samples.filter((sample) => sample.turns >= WARM_UP);
const low = Math.min(...afterWarmUp.map((sample) => sample.rssAfterGc));
const high = Math.max(...afterWarmUp.map((sample) => sample.rssAfterGc));
const spread = (high - low) / 2 ** 20;
const met = spread <= LIMIT_MB && socketsAfter <= socketsBefore;
const lines = [
  `### \`youyou serve\`: ${TURNS.toLocaleString('en')} turns from ${CLIENTS} concurrent clients, ${JOURNAL_RETENTION_MS === 0 ? 'journal retention the default 15 min' : `journal retention ${JOURNAL_RETENTION_MS / 1000} s`}`,
  '',
  `${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC · Node ${process.version} · ${seconds.toFixed(0)} s · load average ${os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')} at the end${MALLOC_NOTE}${Object.entries(GLIBC_TUNING)
    .map(([name, value]) => ` · ${name}=${value}`)
    .join('')} · node ${NODE_FLAGS.join(' ')} · ${dropped} turns dropped mid-turn by their client`,
  '',
  '| turns | server RSS MB | RSS MB after a full gc | V8 heap used MB after it | V8 heap total MB | external MB | array buffers MB | RSS MB in smaps, read after the probe answered | glibc main arena MB | glibc thread arenas MB (count) | other anonymous MB | other anonymous − V8 heap total MB | files MB | open sockets |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...[...samples, gone, ...(JOURNAL_RETENTION_MS > 0 ? [idle] : [])].map(
    (row) =>
      `| ${row.turns} | ${mb(row.rss)} | ${mb(row.rssAfterGc)} | ${mb(row.heapUsed)} | ${heapColumns(row.afterGc)} | ${mappingColumns(row)} | ${row.sockets} |`,
  ),
  '',
  `RSS after a full gc, after the warm-up (${WARM_UP.toLocaleString('en')} turns): ${mb(low)}–${mb(high)} MB, a spread of ${spread.toFixed(1)} MB (goal ≤ ${LIMIT_MB}). Sockets before the load ${socketsBefore}, after the clients went ${socketsAfter}. Goal ${met ? '**met**' : '**missed**'}.`,
];
process.stdout.write(`${lines.join('\n')}\n`);
process.exit(met ? 0 : 1);
