/**
 * The OpenAI Agents SDK: `run(agent, input, { stream: true })` with a fake `Model` whose
 * getStreamedResponse replays pre-built stream events. Tools are async and use zod schemas, so their
 * arguments are validated; the agent's lifecycle hooks (agent_start, agent_end, agent_tool_start,
 * agent_tool_end: listeners of an event emitter, which the SDK does not await) have async no-op
 * listeners; the consumer iterates the StreamedRunResult. Tracing is turned off: with it on, the SDK
 * would try to export traces over the network.
 * W5: the SDK's persistence port is `Session` (it ships an in-memory one and one kept by OpenAI's
 * servers); here a `Session` over the SQLite log of bench/lib/sqlite-log.mjs, one row per item, passed
 * as `run(..., { session })`, a new session per run. The SDK decides when it calls `addItems`.
 */
import { Agent, run, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { openSqliteLog } from '../lib/sqlite-log.mjs';
import {
  answerPlans,
  callArguments,
  callId,
  ECHO_TOOL,
  neutralHistory,
  PARALLEL_DELAY_MS,
  TOOL_STEPS,
  USAGE,
  USER_TEXT,
  WAIT_TOOL,
} from '../lib/workloads.mjs';

export const name = '@openai/agents';

setTracingDisabled(true);

const usage = {
  requests: 1,
  inputTokens: USAGE.inputTokens,
  outputTokens: USAGE.outputTokens,
  totalTokens: USAGE.inputTokens + USAGE.outputTokens,
};
let responses = 0;

function textAnswer(deltas) {
  return [
    { type: 'response_started' },
    ...deltas.map((delta) => ({ type: 'output_text_delta', delta })),
    {
      type: 'response_done',
      response: {
        id: `resp_${responses++}`,
        usage,
        output: [
          {
            type: 'message',
            id: `msg_${responses}`,
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: deltas.join('') }],
          },
        ],
      },
    },
  ];
}

function toolAnswer(toolName, calls) {
  return [
    { type: 'response_started' },
    {
      type: 'response_done',
      response: {
        id: `resp_${responses++}`,
        usage,
        output: calls.map((index) => ({
          type: 'function_call',
          id: `fc_${index}`,
          callId: callId(index),
          name: toolName,
          arguments: callArguments(index),
          status: 'completed',
        })),
      },
    },
  ];
}

/** A Model whose answers are loaded before each run; answer `i` of the run is `answers[i]`. */
class ReplayModel {
  answers = [];
  next = 0;
  load(answers) {
    this.answers = answers;
    this.next = 0;
  }
  async getResponse() {
    throw new Error('the benchmark only streams');
  }
  async *getStreamedResponse() {
    const events = this.answers[this.next++];
    if (events === undefined) throw new Error('the fake model has no answer left');
    for (const event of events) yield event;
  }
}

const parameters = z.object({ n: z.number().int() });
let inFlight = 0;
let maxInFlight = 0;
const model = new ReplayModel();
const agent = new Agent({
  name: 'bench',
  instructions: 'Be brief.',
  model,
  tools: [
    tool({
      name: ECHO_TOOL.name,
      description: ECHO_TOOL.description,
      parameters,
      execute: async ({ n }) => ECHO_TOOL.run(n),
    }),
    tool({
      name: WAIT_TOOL.name,
      description: WAIT_TOOL.description,
      parameters,
      execute: async ({ n }) => {
        inFlight++;
        if (inFlight > maxInFlight) maxInFlight = inFlight;
        await new Promise((resolve) => setTimeout(resolve, PARALLEL_DELAY_MS));
        inFlight--;
        return ECHO_TOOL.run(n);
      },
    }),
  ],
});

const asyncNoop = async () => undefined;
for (const event of ['agent_start', 'agent_end', 'agent_tool_start', 'agent_tool_end'])
  agent.on(event, asyncNoop);

/** One run; `session`, when given, is the run's Session (W5). */
async function timedTurn(answers, input, session) {
  model.load(answers);
  let text = '';
  let toolCalls = 0;
  let firstMs;
  const started = performance.now();
  const options = { stream: true, maxTurns: TOOL_STEPS + 10 };
  if (session !== undefined) options.session = session;
  const result = await run(agent, input, options);
  for await (const event of result) {
    if (event.type === 'raw_model_stream_event') {
      if (event.data.type === 'output_text_delta') {
        if (firstMs === undefined) firstMs = performance.now() - started;
        text += event.data.delta;
      }
    } else if (event.type === 'run_item_stream_event' && event.name === 'tool_output') toolCalls++;
  }
  await result.completed;
  if (result.error) throw result.error;
  return { ms: performance.now() - started, firstMs, text, toolCalls };
}

const {
  stream: streamAnswers,
  toolLoop: toolLoopAnswers,
  parallel: parallelAnswers,
  short: shortAnswers,
} = answerPlans({ textAnswer, toolAnswer });

function historyItems() {
  return neutralHistory().map((item) => {
    switch (item.kind) {
      case 'user':
        return { type: 'message', role: 'user', content: item.text };
      case 'assistant':
        return {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: item.text }],
        };
      case 'tool_call':
        return {
          type: 'function_call',
          callId: item.callId,
          name: item.toolName,
          arguments: JSON.stringify({ n: item.n }),
          status: 'completed',
        };
      default:
        return {
          type: 'function_call_result',
          callId: item.callId,
          name: item.toolName,
          status: 'completed',
          output: item.text,
        };
    }
  });
}
const history = historyItems();
const userItem = { type: 'message', role: 'user', content: USER_TEXT };

let log;
let durableRuns = 0;
/** The SDK's `Session` port over the SQLite log, for one session id. */
class SqliteSession {
  constructor(sessionId) {
    this.sessionId = sessionId;
  }
  async getSessionId() {
    return this.sessionId;
  }
  async getItems(limit) {
    const items = log.load(this.sessionId);
    return limit === undefined ? items : items.slice(Math.max(items.length - limit, 0));
  }
  async addItems(items) {
    for (const item of items) log.append(this.sessionId, item);
  }
  async popItem() {
    return log.pop(this.sessionId);
  }
  async clearSession() {
    log.remove(this.sessionId);
  }
}

/** Closes the SQLite log of W5 and removes its file. */
export function close() {
  log?.close();
}

export const workloads = {
  stream: () => timedTurn(streamAnswers, USER_TEXT),
  toolLoop: () => timedTurn(toolLoopAnswers, USER_TEXT),
  async parallel() {
    maxInFlight = 0;
    return { ...(await timedTurn(parallelAnswers, USER_TEXT)), maxInFlight };
  },
  history: (withHistory) => timedTurn(shortAnswers, withHistory ? [...history, userItem] : USER_TEXT),
  async durable() {
    log ??= openSqliteLog();
    const session = new SqliteSession(`durable-${durableRuns++}`);
    try {
      return await timedTurn(toolLoopAnswers, USER_TEXT, session);
    } finally {
      await session.clearSession();
    }
  },
};
