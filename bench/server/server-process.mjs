// One server process of the scale-out bench: the BUILT @youyou/agent, @youyou/postgres and @youyou/server on
// the PostgreSQL schema the parent names, with a scripted model whose turns are five tool steps (each answer
// after `modelDelayMs`, each tool call taking `toolDelayMs`) and a final answer. Tells the parent its URL
// over IPC and runs until killed (SIGTERM closes it, so that `--cpu-prof` can write its profile).
// Settings: YOUYOU_BENCH_SERVER as JSON { connectionString, schema, ttlMs, modelDelayMs, toolDelayMs,
// sessions, poolMax, idleSessionMs, applicationName }.
//
// Measuring only, outside the product: the pool's `query` and `connect` are wrapped to count the statements
// this process sends (by their first words) and the time a query waited for a free connection. The parent
// asks for these counters and the process's CPU time with a `stats` message.
import { AgentBuilder } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { openPostgresStorage } from '@youyou/postgres';
import { createServer } from '@youyou/server';

const STEPS = 5;
const settings = JSON.parse(process.env.YOUYOU_BENCH_SERVER ?? '{}');
const storage = await openPostgresStorage({
  connectionString: settings.connectionString,
  // The name lets the parent find this process's PostgreSQL backends (their CPU time).
  poolConfig: { max: settings.poolMax ?? 10, application_name: settings.applicationName },
  schema: settings.schema,
  eventNotifications: true,
  lease: { ttlMs: settings.ttlMs },
  onBackgroundError: () => undefined,
});

const counters = { queries: 0, byKind: {}, poolWaits: 0, poolWaitMs: 0, poolWaitMaxMs: 0, queryMs: 0 };
/** A statement's kind for the counts: a prepared statement's label, else the first SQL words. */
function kindOf(config) {
  if (typeof config === 'string') return config.trim().split(/\s+/).slice(0, 2).join(' ');
  if (config.name !== undefined) return config.name.replace(/^youyou_[0-9a-f]+_/, '');
  const text = config.text.trim();
  if (text.startsWith('WITH taken')) return 'lease acquire';
  if (text.startsWith('SELECT pg_notify')) return 'notify';
  return text.split(/\s+/).slice(0, 2).join(' ');
}
const pool = storage.pool;
const connect = pool.connect.bind(pool);
pool.connect = (callback) => {
  const askedAt = performance.now();
  const measured = (error, client, release) => {
    const waited = performance.now() - askedAt;
    counters.poolWaits += 1;
    counters.poolWaitMs += waited;
    counters.poolWaitMaxMs = Math.max(counters.poolWaitMaxMs, waited);
    return { error, client, release };
  };
  if (typeof callback === 'function') {
    return connect((error, client, release) => {
      measured(error, client, release);
      callback(error, client, release);
    });
  }
  return connect().then((client) => {
    measured(undefined, client, undefined);
    return client;
  });
};
const query = pool.query.bind(pool);
pool.query = (config, values, callback) => {
  const kind = kindOf(config);
  counters.queries += 1;
  counters.byKind[kind] = (counters.byKind[kind] ?? 0) + 1;
  const startedAt = performance.now();
  const result = query(config, values, callback);
  result?.finally?.(() => {
    counters.queryMs += performance.now() - startedAt;
  });
  return result;
};

// Every answer looks at the history: a step per tool result so far, the final answer after the fifth. A
// session resumed after a crash goes on from where its log stands.
const answer = (request) => {
  const done = request.messages.filter((message) => message.type === 'tool_result').length;
  const wait = { type: 'delay', ms: settings.modelDelayMs };
  return done < STEPS
    ? [
        wait,
        { type: 'text', text: `step ${done + 1}` },
        { type: 'tool_call', toolName: 'work', arguments: { step: done + 1 } },
      ]
    : [wait, { type: 'text', text: 'all steps done' }];
};
const provider = new ScriptedModelProvider({
  responses: Array.from({ length: settings.sessions * (STEPS + 2) * 4 }, () => answer),
});
const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: settings.sessions })
  .registerModelProvider(provider)
  .registerSessionStorage(storage.sessions)
  .registerTool({
    name: 'work',
    description: 'one step of work',
    parametersSchema: { type: 'object', properties: { step: { type: 'number' } } },
    isMutating: false,
    execute: async () => {
      await new Promise((resolve) => setTimeout(resolve, settings.toolDelayMs));
      return { content: 'ok', isError: false };
    },
  })
  .build();
const server = createServer({
  agent,
  storage: storage.sessions,
  auth: { tokens: { 'bench-token': 'bench' } },
  limits: { idleSessionMs: settings.idleSessionMs ?? 60_000 },
});
// Measuring only: how long the app takes from a request to its response (for a turn, the SSE response starts
// once the turn has started), and how late the event loop runs a timer (how busy the process is).
const handling = [];
const appFetch = server.fetch;
server.fetch = async (request, ...rest) => {
  const startedAt = performance.now();
  const response = await appFetch(request, ...rest);
  // Turns that started only: a 409 while the dead process's lease lives is not a turn.
  if (request.method === 'POST' && request.url.endsWith('/messages') && response.status === 200) {
    handling.push(performance.now() - startedAt);
  }
  return response;
};
const loopDelays = [];
let tickAt = performance.now();
setInterval(() => {
  const now = performance.now();
  loopDelays.push(now - tickAt - 50);
  tickAt = now;
}, 50).unref();
const listening = await server.listen({ port: 0, host: '127.0.0.1' });
process.on('message', (message) => {
  if (message?.type !== 'stats') return;
  const cpu = process.cpuUsage();
  process.send?.({
    type: 'stats',
    cpuMs: (cpu.user + cpu.system) / 1000,
    pool: { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount },
    turnRequestMs: handling.splice(0),
    loopDelayMs: loopDelays.splice(0),
    ...counters,
  });
});
process.once('SIGTERM', () => {
  // A deadline, so that a hung close cannot keep the bench waiting.
  setTimeout(() => process.exit(0), 2_000).unref();
  listening
    .close()
    .then(() => storage.close())
    .finally(() => process.exit(0));
});
process.send?.({ type: 'listening', url: listening.url });
