/**
 * The Vercel AI SDK: `streamText` with `MockLanguageModelV3` from `ai/test`, whose doStream returns a
 * ReadableStream already filled with the pre-built stream parts of the answer. Tools use zod schemas,
 * so their inputs are validated; the consumer reads `fullStream`.
 */
import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
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
    execute: ({ n }) => ECHO_TOOL.run(n),
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

async function timedTurn(answers, messages) {
  const model = mockModel(answers);
  let text = '';
  let toolCalls = 0;
  let firstMs;
  const started = performance.now();
  const result = streamText({ model, tools, messages, stopWhen: stepCountIs(TOOL_STEPS + 10) });
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

export const workloads = {
  stream: () => timedTurn(streamAnswers, [userMessage]),
  toolLoop: () => timedTurn(toolLoopAnswers, [userMessage]),
  async parallel() {
    maxInFlight = 0;
    return { ...(await timedTurn(parallelAnswers, [userMessage])), maxInFlight };
  },
  history: (withHistory) => timedTurn(shortAnswers, withHistory ? [...history, userMessage] : [userMessage]),
};
