// Load and faults on two server processes sharing one PostgreSQL (issue 17): `sessions` concurrent sessions,
// each one five-step tool turn from a scripted model with delays; every client tails its session with
// GET /sessions/:id/log. Mid-run process A is SIGKILLed: its clients reconnect their tail to B with their
// last id and send the next request there once A's lease expires. At the end each client's received ids are
// checked against the log in PostgreSQL: every committed event exactly once, in order.
// Run: npm run build && DATABASE_URL=postgres://… node bench/server/scale-out.mjs [sessions] [killAfterMs]
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { openPostgresStorage } from '@youyou/postgres';

const SESSIONS = Number(process.argv[2] ?? 200);
const KILL_AFTER_MS = Number(process.argv[3] ?? 1_500);
const TTL_MS = 3_000;
const connectionString = process.env.DATABASE_URL;
if (connectionString === undefined) throw new Error('set DATABASE_URL');
const schema = `bench_${randomBytes(4).toString('hex')}`;
const child = fileURLToPath(new URL('./server-process.mjs', import.meta.url));
const headers = { authorization: 'Bearer bench-token', 'content-type': 'application/json' };

function start() {
  const process_ = fork(child, [], {
    env: {
      ...process.env,
      YOUYOU_BENCH_SERVER: JSON.stringify({
        connectionString,
        schema,
        ttlMs: TTL_MS,
        modelDelayMs: 50,
        toolDelayMs: 100,
        sessions: SESSIONS,
      }),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve) =>
    process_.once('message', (message) => resolve({ url: message.url, child: process_ })),
  );
}

async function* sse(response) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = /^id: ?(.*)$/m.exec(block)?.[1];
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      if (data !== '') yield { id, data: JSON.parse(data) };
    }
  }
}

const isEnd = (type) => ['turn_complete', 'turn_cancelled', 'turn_suspended'].includes(type);

/** One client: a tail on /log and the turn, moving to `fallback` when its server dies. */
async function client(server, fallback, sessionId, stats) {
  const received = [];
  let base = server.url;
  let finished = false;
  const tailing = (async () => {
    while (!finished) {
      const controller = new AbortController();
      const last = received.at(-1);
      const tailHeaders = { ...headers, ...(last === undefined ? {} : { 'last-event-id': String(last) }) };
      try {
        const response = await fetch(`${base}/sessions/${sessionId}/log`, {
          headers: tailHeaders,
          signal: controller.signal,
        });
        for await (const message of sse(response)) {
          received.push(Number(message.id));
          if (
            message.data.payload.type === 'assistant_message' &&
            JSON.stringify(message.data.payload).includes('all steps done')
          ) {
            finished = true;
            controller.abort();
          }
        }
      } catch {
        base = fallback.url;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  })();
  let content = 'do the five steps';
  for (let attempt = 0; !finished; attempt += 1) {
    const sentAt = performance.now();
    try {
      const response = await fetch(`${base}/sessions/${sessionId}/messages`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ content }),
      });
      if (response.status === 409) {
        await response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      let first = true;
      for await (const message of sse(response)) {
        if (first && attempt === 0) stats.firstEventMs.push(performance.now() - sentAt);
        first = false;
        stats.liveEvents += 1;
        if (isEnd(message.data.payload.type)) break;
      }
      break;
    } catch {
      base = fallback.url;
      content = 'go on';
      stats.moved += 1;
    }
  }
  await tailing;
  return received;
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

const inspector = await openPostgresStorage({ connectionString, schema, onBackgroundError: () => undefined });
const [a, b] = await Promise.all([start(), start()]);
const owners = [];
for (let index = 0; index < SESSIONS; index += 1) {
  const server = index % 2 === 0 ? a : b;
  const created = await fetch(`${server.url}/sessions`, { method: 'POST', headers, body: '{}' });
  owners.push({ server, other: server === a ? b : a, sessionId: (await created.json()).sessionId });
}
const stats = { firstEventMs: [], liveEvents: 0, moved: 0 };
const startedAt = performance.now();
const clients = owners.map(({ server, other, sessionId }) =>
  client(server, other === a ? b : other, sessionId, stats),
);
const killed = new Promise((resolve) =>
  setTimeout(() => {
    a.child.kill('SIGKILL');
    resolve(performance.now() - startedAt);
  }, KILL_AFTER_MS),
);
const received = await Promise.all(clients);
const wallMs = performance.now() - startedAt;
let lost = 0;
let doubled = 0;
let events = 0;
for (const [index, { sessionId }] of owners.entries()) {
  const log = (await inspector.sessions.readEventsAfter(sessionId, 0, 10_000)).map((event) => event.sequence);
  const got = received[index];
  events += log.length;
  if (new Set(got).size !== got.length) doubled += 1;
  if (JSON.stringify(got) !== JSON.stringify(log)) lost += 1;
}
console.log(
  JSON.stringify(
    {
      sessions: SESSIONS,
      killedAtMs: Math.round(await killed),
      wallMs: Math.round(wallMs),
      committedEvents: events,
      sessionsWithLostOrReordered: lost,
      sessionsWithDoubles: doubled,
      clientsMoved: stats.moved,
      firstEventP50Ms: Math.round(percentile(stats.firstEventMs, 50)),
      firstEventP99Ms: Math.round(percentile(stats.firstEventMs, 99)),
    },
    null,
    2,
  ),
);
b.child.kill('SIGTERM');
await inspector.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
await inspector.close();
process.exit(lost === 0 && doubled === 0 ? 0 : 1);
