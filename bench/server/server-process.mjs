// One server process of the scale-out bench: the BUILT @youyou/agent, @youyou/postgres and @youyou/server on
// the PostgreSQL schema the parent names, with a scripted model whose turns are five tool steps (each answer
// after `modelDelayMs`, each tool call taking `toolDelayMs`) and a final answer. Tells the parent its URL
// over IPC and runs until killed. Settings: YOUYOU_BENCH_SERVER as JSON { connectionString, schema, ttlMs,
// modelDelayMs, toolDelayMs, sessions }.
import { AgentBuilder } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { openPostgresStorage } from '@youyou/postgres';
import { createServer } from '@youyou/server';

const STEPS = 5;
const settings = JSON.parse(process.env.YOUYOU_BENCH_SERVER ?? '{}');
const storage = await openPostgresStorage({
  connectionString: settings.connectionString,
  poolConfig: { max: 20 },
  schema: settings.schema,
  eventNotifications: true,
  lease: { ttlMs: settings.ttlMs },
  onBackgroundError: () => undefined,
});
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
  responses: Array.from({ length: settings.sessions * (STEPS + 2) * 2 }, () => answer),
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
  limits: { idleSessionMs: 500 },
});
const listening = await server.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ type: 'listening', url: listening.url });
