/**
 * The cost of @youyou/otel with no OpenTelemetry SDK registered, on W2 (200 sequential tool steps in one turn):
 * `off` is the agent as bench/runtimes/youyou.mjs builds it (a no-op hooks plugin, in-memory storage), `on` adds
 * `createOtelPlugin()`, and `observer` adds instead a plugin observing every turn with an empty observer (what
 * the core's observation costs when an observer does want the turn). Each variant runs in its own child
 * process (so none shapes another's JIT), in rotating order for several rounds; the table gives each round's
 * median wall and CPU time (CPU time is less disturbed by other processes on a shared machine) and ratios.
 *
 * Needs the built dists: `npm run build -w @youyou/agent -w @youyou/otel`, then `node bench/otel-overhead.mjs`.
 * Options: --rounds N (default 6), --samples N (turns measured per child, default 60), --warmup N (default 30).
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  answerPlans,
  callArguments,
  callId,
  check,
  ECHO_TOOL,
  FINAL_TEXT,
  TOOL_STEPS,
  USAGE,
  USER_TEXT,
} from './lib/workloads.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  return index === -1 ? fallback : args[index + 1];
};

/** One child: builds the agent of `variant`, warms up, then prints the times of `samples` W2 turns as JSON. */
async function measure(variant, samples, warmup) {
  const { AgentBuilder, InMemorySessionStorage } = await import('../packages/agent/dist/index.js');
  const model = {
    id: 'fake-model',
    displayName: 'Fake model',
    contextWindow: 10_000_000,
    capabilities: { toolUse: true, vision: false, streaming: true },
  };
  const usageEvent = { type: 'usage', usage: USAGE };
  const textAnswer = (deltas) => [
    ...deltas.map((text) => ({ type: 'text_delta', text })),
    usageEvent,
    { type: 'done', stopReason: 'end_turn' },
  ];
  const toolAnswer = (toolName, calls) => [
    ...calls.map((index) => ({
      type: 'tool_call',
      callId: callId(index),
      toolName,
      arguments: callArguments(index),
    })),
    usageEvent,
    { type: 'done', stopReason: 'tool_use' },
  ];
  const { toolLoop } = answerPlans({ textAnswer, toolAnswer });
  const provider = {
    id: 'replay',
    models: [model],
    answers: [],
    next: 0,
    chat() {
      const events = this.answers[this.next++];
      if (events === undefined) throw new Error('the fake model has no answer left');
      return (async function* replay() {
        for (const event of events) yield event;
      })();
    },
  };
  const noop = () => undefined;
  const hooksPlugin = {
    id: 'bench-hooks',
    displayName: 'Bench hooks',
    description: 'Taps the turn and tool hooks with handlers that do nothing.',
    initialize: async () => undefined,
    apply(context) {
      for (const event of ['TurnStart', 'TurnEnd', 'BeforeToolUse', 'AfterToolUse']) context.tap(event, noop);
    },
    shutdown: async () => undefined,
  };
  const storage = new InMemorySessionStorage();
  const builder = new AgentBuilder({ defaultModel: model.id, maxToolCallsPerTurn: 1_000 })
    .registerModelProvider(provider)
    .registerTool({
      name: ECHO_TOOL.name,
      description: ECHO_TOOL.description,
      parametersSchema: ECHO_TOOL.schema,
      isMutating: false,
      execute: ({ arguments: input }) => ({ content: ECHO_TOOL.run(input.n), isError: false }),
    })
    .registerPlugin(hooksPlugin)
    .registerSessionStorage(storage);
  if (variant === 'observer') {
    // The core's share: an observer that does nothing.
    builder.registerPlugin({
      ...hooksPlugin,
      id: 'bench-observer',
      apply: (context) => context.observe(noop),
    });
  }
  if (variant === 'on') {
    const { createOtelPlugin } = await import('../packages/otel/dist/index.js');
    builder.registerPlugin(createOtelPlugin());
  }
  const agent = await builder.build();

  const turn = async () => {
    const session = await agent.newSession();
    provider.answers = toolLoop;
    provider.next = 0;
    let text = '';
    let toolCalls = 0;
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    for await (const event of await session.sendMessage(USER_TEXT)) {
      const payload = event.payload;
      if (payload.type === 'text_delta') text += payload.text;
      else if (payload.type === 'tool_call_end') toolCalls++;
      else if (payload.type === 'error') throw payload.error;
    }
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuStarted);
    check(`W2 (${variant})`, { text, toolCalls }, { text: FINAL_TEXT, toolCalls: TOOL_STEPS });
    await session.close();
    await storage.deleteSession(session.id);
    return { ms, cpuMs: (cpu.user + cpu.system) / 1_000 };
  };
  for (let index = 0; index < warmup; index++) await turn();
  const wall = [];
  const cpu = [];
  for (let index = 0; index < samples; index++) {
    globalThis.gc?.();
    const { ms, cpuMs } = await turn();
    wall.push(ms);
    cpu.push(cpuMs);
  }
  await agent.shutdown();
  process.stdout.write(`${JSON.stringify({ wall, cpu })}\n`);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function runChild(variant, samples, warmup) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        fileURLToPath(import.meta.url),
        '--child',
        variant,
        '--samples',
        `${samples}`,
        '--warmup',
        `${warmup}`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${variant}: the child exited with code ${code}`));
      else resolve(JSON.parse(output.trim().split('\n').at(-1)));
    });
  });
}

const child = option('--child', undefined);
const samples = Number(option('--samples', '60'));
const warmup = Number(option('--warmup', '30'));
if (child !== undefined) {
  await measure(child, samples, warmup);
} else {
  const rounds = Number(option('--rounds', '6'));
  const variants = ['off', 'on', 'observer'];
  const rows = [];
  for (let round = 0; round < rounds; round++) {
    // Rotate which variant goes first, so a drift of the machine does not favour one of them.
    const order = variants.map((_, index) => variants[(index + round) % variants.length]);
    const row = { round: round + 1 };
    for (const variant of order) {
      const { wall, cpu } = await runChild(variant, samples, warmup);
      row[variant] = { wall: median(wall), cpu: median(cpu) };
    }
    rows.push(row);
    process.stderr.write(
      `round ${round + 1}: ${variants.map((variant) => `${variant} ${row[variant].wall.toFixed(1)}/${row[variant].cpu.toFixed(1)} ms`).join(', ')}\n`,
    );
  }
  const ratio = (row, variant, measure) => row[variant][measure] / row.off[measure];
  const cell = (row, variant) =>
    `${row[variant].wall.toFixed(2)} / ${row[variant].cpu.toFixed(2)} (${ratio(row, variant, 'wall').toFixed(3)} / ${ratio(row, variant, 'cpu').toFixed(3)})`;
  const summary = (variant, measure) => {
    const ratios = rows.map((row) => ratio(row, variant, measure));
    return `${median(ratios).toFixed(3)} (min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)})`;
  };
  const offWall = rows.map((row) => row.off.wall);
  const spread = (Math.max(...offWall) - Math.min(...offWall)) / median(offWall);
  const lines = [
    `W2 (${TOOL_STEPS} sequential tool steps): median wall / CPU ms of ${samples} turns per child process, ` +
      `${rounds} rounds; in brackets the ratio to "off"`,
    '',
    '| round | plugin off | plugin on, no SDK | an empty observer (core only) |',
    '|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.round} | ${row.off.wall.toFixed(2)} / ${row.off.cpu.toFixed(2)} | ${cell(row, 'on')} | ${cell(row, 'observer')} |`,
    ),
    '',
    `on/off: wall ${summary('on', 'wall')}, CPU ${summary('on', 'cpu')}`,
    `empty observer/off: wall ${summary('observer', 'wall')}, CPU ${summary('observer', 'cpu')}`,
    `noise: the "off" wall medians spread ${(spread * 100).toFixed(1)}% across rounds; load average ${os
      .loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
