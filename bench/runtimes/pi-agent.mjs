/**
 * @mariozechner/pi-agent-core: its stateful `Agent`, with a custom stream function that returns an
 * AssistantMessageEventStream already filled with the pre-built events of the answer. Tools are async and
 * use TypeBox schemas, so their arguments are validated; `beforeToolCall` and `afterToolCall` are async
 * no-op hooks (its turn start and end reach the subscribed listener); the consumer is a subscribed
 * listener (the Agent awaits it).
 * W5: pi-agent-core has no storage of its own (its coding agent appends each message to a session file
 * when the message ends); here a second, async listener writes each message at `message_end` to the SQLite
 * log of bench/lib/sqlite-log.mjs: a tool call's assistant message ends before its tool runs.
 */
import { Agent } from '@mariozechner/pi-agent-core';
import { AssistantMessageEventStream, Type } from '@mariozechner/pi-ai';
import { openSqliteLog } from '../lib/sqlite-log.mjs';
import {
  answerPlans,
  callId,
  ECHO_TOOL,
  neutralHistory,
  PARALLEL_DELAY_MS,
  USAGE,
  USER_TEXT,
  WAIT_TOOL,
} from '../lib/workloads.mjs';

export const name = '@mariozechner/pi-agent-core';

const model = {
  id: 'fake-model',
  name: 'Fake model',
  api: 'fake',
  provider: 'fake',
  baseUrl: '',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 10_000_000,
  maxTokens: 100_000,
};
const usage = {
  input: USAGE.inputTokens,
  output: USAGE.outputTokens,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: USAGE.inputTokens + USAGE.outputTokens,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

function assistantMessage(content, stopReason) {
  return {
    role: 'assistant',
    content,
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage,
    stopReason,
    timestamp: 0,
  };
}

function textAnswer(deltas) {
  const text = deltas.join('');
  const partial = assistantMessage([{ type: 'text', text }], 'stop');
  return [
    { type: 'start', partial },
    { type: 'text_start', contentIndex: 0, partial },
    ...deltas.map((delta) => ({ type: 'text_delta', contentIndex: 0, delta, partial })),
    { type: 'text_end', contentIndex: 0, content: text, partial },
    { type: 'done', reason: 'stop', message: partial },
  ];
}

function toolAnswer(toolName, calls) {
  const content = calls.map((index) => ({
    type: 'toolCall',
    id: callId(index),
    name: toolName,
    arguments: { n: index },
  }));
  const partial = assistantMessage(content, 'toolUse');
  return [
    { type: 'start', partial },
    ...content.map((toolCall, contentIndex) => ({ type: 'toolcall_end', contentIndex, toolCall, partial })),
    { type: 'done', reason: 'toolUse', message: partial },
  ];
}

let answers = [];
let next = 0;
/** The custom stream function: answer `i` of the run is `answers[i]`, pushed into the stream at once. */
function streamFn() {
  const events = answers[next++];
  if (events === undefined) throw new Error('the fake model has no answer left');
  const stream = new AssistantMessageEventStream();
  for (const event of events) stream.push(event);
  return stream;
}

const parameters = Type.Object({ n: Type.Integer() }, { additionalProperties: false });
let inFlight = 0;
let maxInFlight = 0;
const tools = [
  {
    name: ECHO_TOOL.name,
    label: 'Echo',
    description: ECHO_TOOL.description,
    parameters,
    execute: async (_id, { n }) => ({ content: [{ type: 'text', text: ECHO_TOOL.run(n) }], details: {} }),
  },
  {
    name: WAIT_TOOL.name,
    label: 'Wait',
    description: WAIT_TOOL.description,
    parameters,
    execute: async (_id, { n }) => {
      inFlight++;
      if (inFlight > maxInFlight) maxInFlight = inFlight;
      await new Promise((resolve) => setTimeout(resolve, PARALLEL_DELAY_MS));
      inFlight--;
      return { content: [{ type: 'text', text: ECHO_TOOL.run(n) }], details: {} };
    },
  },
];

const asyncNoop = async () => undefined;

/** One turn of a new Agent; `persist`, when given, is subscribed too (W5's writer). */
async function timedTurn(runAnswers, messages, persist) {
  const agent = new Agent({
    initialState: { systemPrompt: 'Be brief.', model, tools, messages },
    streamFn,
    beforeToolCall: asyncNoop,
    afterToolCall: asyncNoop,
  });
  if (persist !== undefined) agent.subscribe(persist);
  answers = runAnswers;
  next = 0;
  let text = '';
  let toolCalls = 0;
  let firstMs;
  let started = 0;
  agent.subscribe((event) => {
    if (event.type === 'message_update') {
      const update = event.assistantMessageEvent;
      if (update.type === 'text_delta') {
        if (firstMs === undefined) firstMs = performance.now() - started;
        text += update.delta;
      }
    } else if (event.type === 'tool_execution_end') toolCalls++;
  });
  started = performance.now();
  await agent.prompt(USER_TEXT);
  const ms = performance.now() - started;
  if (agent.state.errorMessage) throw new Error(agent.state.errorMessage);
  return { ms, firstMs, text, toolCalls };
}

const {
  stream: streamAnswers,
  toolLoop: toolLoopAnswers,
  parallel: parallelAnswers,
  short: shortAnswers,
} = answerPlans({ textAnswer, toolAnswer });

function historyMessages() {
  return neutralHistory().map((item) => {
    switch (item.kind) {
      case 'user':
        return { role: 'user', content: item.text, timestamp: 0 };
      case 'assistant':
        return assistantMessage([{ type: 'text', text: item.text }], 'stop');
      case 'tool_call':
        return assistantMessage(
          [{ type: 'toolCall', id: item.callId, name: item.toolName, arguments: { n: item.n } }],
          'toolUse',
        );
      default:
        return {
          role: 'toolResult',
          toolCallId: item.callId,
          toolName: item.toolName,
          content: [{ type: 'text', text: item.text }],
          isError: false,
          timestamp: 0,
        };
    }
  });
}
const history = historyMessages();
/**
 * BENCH_PI_LOADED_HISTORY=1: W4's history is read back from JSON before each run, as a host that keeps its
 * sessions in a file loads one, rather than handed over as one array built at start. A diagnostic of how much
 * of W4 is the history being freshly loaded (our W4 saves and resumes it through the storage port); the
 * table's W4 is the default.
 */
const loadedHistory = process.env.BENCH_PI_LOADED_HISTORY === '1';
const historyJson = JSON.stringify(history);

let log;
let durableRuns = 0;
/** Closes the SQLite log of W5 and removes its file. */
export function close() {
  log?.close();
}

export const workloads = {
  stream: () => timedTurn(streamAnswers, []),
  toolLoop: () => timedTurn(toolLoopAnswers, []),
  async parallel() {
    maxInFlight = 0;
    return { ...(await timedTurn(parallelAnswers, [])), maxInFlight };
  },
  history: (withHistory) =>
    timedTurn(shortAnswers, withHistory ? (loadedHistory ? JSON.parse(historyJson) : history) : []),
  async durable() {
    log ??= openSqliteLog();
    const sessionId = `durable-${durableRuns++}`;
    const persist = async (event) => {
      if (event.type === 'message_end') log.append(sessionId, event.message);
    };
    try {
      return await timedTurn(toolLoopAnswers, [], persist);
    } finally {
      log.remove(sessionId);
    }
  },
};
