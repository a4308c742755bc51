/**
 * The floor: a hand-written loop doing the same work with no framework. The fake model is an async
 * generator over pre-built events; the loop streams them to the consumer through an async generator,
 * parses and checks tool arguments, runs the tools (async functions, concurrently, as Promise.all) and
 * keeps the history. W5: the same loop writing each message to a SQLite file as it keeps it (before the
 * tools run, for a tool call), with the log of bench/lib/sqlite-log.mjs.
 */
import { openSqliteLog } from '../lib/sqlite-log.mjs';
import {
  answerPlans,
  callArguments,
  callId,
  ECHO_TOOL,
  neutralHistory,
  PARALLEL_CALLS,
  PARALLEL_DELAY_MS,
  USAGE,
  USER_TEXT,
  WAIT_TOOL,
} from '../lib/workloads.mjs';

export const name = 'baseline (no framework)';

async function* replay(events) {
  for (const event of events) yield event;
}

let inFlight = 0;
let maxInFlight = 0;
const tools = new Map([
  [ECHO_TOOL.name, async (args) => ECHO_TOOL.run(args.n)],
  [
    WAIT_TOOL.name,
    async (args) => {
      inFlight++;
      if (inFlight > maxInFlight) maxInFlight = inFlight;
      await new Promise((resolve) => setTimeout(resolve, PARALLEL_DELAY_MS));
      inFlight--;
      return ECHO_TOOL.run(args.n);
    },
  ],
]);

async function runTool(call) {
  const args = JSON.parse(call.arguments);
  if (typeof args !== 'object' || args === null || !Number.isInteger(args.n)) {
    return { callId: call.callId, content: 'invalid arguments', isError: true };
  }
  const content = await tools.get(call.toolName)(args);
  return { callId: call.callId, content, isError: false };
}

/**
 * One turn: model calls and tool rounds until an answer without tool calls. `history.push` keeps a message
 * (W5: an object whose push also writes it to the SQLite log).
 */
async function* turn(history, answers) {
  history.push({ role: 'user', content: USER_TEXT });
  let usage = 0;
  for (let step = 0; ; step++) {
    let text = '';
    const calls = [];
    for await (const event of replay(answers[step])) {
      if (event.type === 'text') {
        text += event.text;
        yield { type: 'text', text: event.text };
      } else if (event.type === 'tool_call') calls.push(event);
      else if (event.type === 'usage') usage += event.usage.inputTokens + event.usage.outputTokens;
    }
    if (text !== '') history.push({ role: 'assistant', content: text });
    if (calls.length === 0) return usage;
    for (const call of calls) history.push({ role: 'tool_call', ...call });
    const results = await Promise.all(calls.map(runTool));
    for (const result of results) {
      history.push({ role: 'tool_result', ...result });
      yield { type: 'tool_result', ...result };
    }
  }
}

async function timedTurn(history, answers) {
  let text = '';
  let toolCalls = 0;
  let firstMs;
  const started = performance.now();
  for await (const event of turn(history, answers)) {
    if (event.type === 'text') {
      if (firstMs === undefined) firstMs = performance.now() - started;
      text += event.text;
    } else if (event.type === 'tool_result') toolCalls++;
  }
  return { ms: performance.now() - started, firstMs, text, toolCalls };
}

const usageEvent = { type: 'usage', usage: USAGE };
const textAnswer = (deltas) => [...deltas.map((text) => ({ type: 'text', text })), usageEvent];
const toolAnswer = (toolName, calls) => [
  ...calls.map((index) => ({
    type: 'tool_call',
    callId: callId(index),
    toolName,
    arguments: callArguments(index),
  })),
  usageEvent,
];

const {
  stream: streamAnswers,
  toolLoop: toolLoopAnswers,
  parallel: parallelAnswers,
  short: shortAnswers,
} = answerPlans({ textAnswer, toolAnswer });
const history = neutralHistory();

let log;
let durableRuns = 0;
/** W5's history: every message kept is written to the SQLite log at once, under a new session id per run. */
function durableHistory() {
  log ??= openSqliteLog();
  const sessionId = `durable-${durableRuns++}`;
  const messages = [];
  return {
    sessionId,
    push(message) {
      messages.push(message);
      log.append(sessionId, message);
    },
  };
}

/** Closes the SQLite log of W5 and removes its file. */
export function close() {
  log?.close();
}

export const workloads = {
  stream: () => timedTurn([], streamAnswers),
  toolLoop: () => timedTurn([], toolLoopAnswers),
  async parallel() {
    maxInFlight = 0;
    return { ...(await timedTurn([], parallelAnswers)), maxInFlight };
  },
  history: (withHistory) => timedTurn(withHistory ? history.slice() : [], shortAnswers),
  async durable() {
    const durable = durableHistory();
    try {
      return await timedTurn(durable, toolLoopAnswers);
    } finally {
      log.remove(durable.sessionId);
    }
  },
  /**
   * Not a column of the table: W3's timers alone (100 timers of 10 ms awaited with Promise.all, no
   * loop, no model), the floor under every runtime's W3 on this machine.
   */
  async timerFloor() {
    const started = performance.now();
    await Promise.all(
      Array.from(
        { length: PARALLEL_CALLS },
        () => new Promise((resolve) => setTimeout(resolve, PARALLEL_DELAY_MS)),
      ),
    );
    return { ms: performance.now() - started, text: '', toolCalls: 0 };
  },
};
