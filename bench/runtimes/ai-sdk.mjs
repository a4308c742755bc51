/**
 * The Vercel AI SDK: `streamText` with `MockLanguageModelV3` from `ai/test`, whose doStream returns a
 * ReadableStream already filled with the pre-built stream parts of the answer. Tools are async and use
 * zod schemas, so their inputs are validated; `experimental_onStart`, `onFinish`,
 * `experimental_onToolCallStart` and `experimental_onToolCallFinish` are async no-op callbacks; the
 * consumer reads `fullStream`.
 * W5: the SDK has no storage; its documented way to persist a chat is to save the response messages
 * from a callback. Here `onStepFinish` writes the step's new messages (the assistant's tool calls and the
 * tools' results, after the tools ran) to the SQLite log of bench/lib/sqlite-log.mjs, and the user's
 * message is written before the call.
 */
import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
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

export const name = 'ai';

const usage = {
  inputTokens: { total: USAGE.inputTokens, noCache: USAGE.inputTokens, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: USAGE.outputTokens, text: USAGE.outputTokens, reasoning: 0 },
};

function textAnswer(deltas) {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    ...deltas.map((delta) => ({ type: 'text-delta', id: 't', delta })),
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
  ];
}

function toolAnswer(toolName, calls) {
  return [
    { type: 'stream-start', warnings: [] },
    ...calls.map((index) => ({
      type: 'tool-call',
      toolCallId: callId(index),
      toolName,
      input: callArguments(index),
    })),
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
  ];
}

function mockModel(answers) {
  let next = 0;
  return new MockLanguageModelV3({
    doStream: async () => {
      const parts = answers[next++];
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
}

const inputSchema = z.object({ n: z.number().int() }).strict();
let inFlight = 0;
let maxInFlight = 0;
const tools = {
  [ECHO_TOOL.name]: tool({
    description: ECHO_TOOL.description,
    inputSchema,
    execute: async ({ n }) => ECHO_TOOL.run(n),
  }),
  [WAIT_TOOL.name]: tool({
    description: WAIT_TOOL.description,
    inputSchema,
    execute: async ({ n }) => {
      inFlight++;
      if (inFlight > maxInFlight) maxInFlight = inFlight;
      await new Promise((resolve) => setTimeout(resolve, PARALLEL_DELAY_MS));
      inFlight--;
      return ECHO_TOOL.run(n);
    },
  }),
};
// jsonSchema() is imported so the choice of zod is visible: a bare JSON schema would skip validation.
void jsonSchema;

const asyncNoop = async () => undefined;

/** One call of streamText; `persist`, when given, is its onStepFinish (W5's writer, set up in the timing). */
async function timedTurn(answers, messages, persist) {
  const model = mockModel(answers);
  let text = '';
  let toolCalls = 0;
  let firstMs;
  const started = performance.now();
  const options = {
    model,
    tools,
    messages,
    stopWhen: stepCountIs(TOOL_STEPS + 10),
    experimental_onStart: asyncNoop,
    onFinish: asyncNoop,
    experimental_onToolCallStart: asyncNoop,
    experimental_onToolCallFinish: asyncNoop,
  };
  if (persist !== undefined) options.onStepFinish = persist();
  const result = streamText(options);
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') {
      if (firstMs === undefined) firstMs = performance.now() - started;
      text += part.text;
    } else if (part.type === 'tool-result') toolCalls++;
    else if (part.type === 'error' || part.type === 'tool-error') throw part.error;
  }
  return { ms: performance.now() - started, firstMs, text, toolCalls };
}

const userMessage = { role: 'user', content: USER_TEXT };
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
        return { role: 'user', content: item.text };
      case 'assistant':
        return { role: 'assistant', content: item.text };
      case 'tool_call':
        return {
          role: 'assistant',
          content: [
            { type: 'tool-call', toolCallId: item.callId, toolName: item.toolName, input: { n: item.n } },
          ],
        };
      default:
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: item.callId,
              toolName: item.toolName,
              output: { type: 'text', value: item.text },
            },
          ],
        };
    }
  });
}
const history = historyMessages();

let log;
let durableRuns = 0;
/** Closes the SQLite log of W5 and removes its file. */
export function close() {
  log?.close();
}

export const workloads = {
  stream: () => timedTurn(streamAnswers, [userMessage]),
  toolLoop: () => timedTurn(toolLoopAnswers, [userMessage]),
  async parallel() {
    maxInFlight = 0;
    return { ...(await timedTurn(parallelAnswers, [userMessage])), maxInFlight };
  },
  history: (withHistory) => timedTurn(shortAnswers, withHistory ? [...history, userMessage] : [userMessage]),
  async durable() {
    log ??= openSqliteLog();
    const sessionId = `durable-${durableRuns++}`;
    // Called inside the timing: the user's message is written, then each step's new response messages
    // (step.response.messages holds every response message of the call so far).
    const persist = () => {
      log.append(sessionId, userMessage);
      let written = 0;
      return async (step) => {
        const messages = step.response.messages;
        for (; written < messages.length; written++) log.append(sessionId, messages[written]);
      };
    };
    try {
      return await timedTurn(toolLoopAnswers, [userMessage], persist);
    } finally {
      log.remove(sessionId);
    }
  },
};
