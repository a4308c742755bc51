/**
 * The workloads every runtime runs, as plain data: each runtime's driver turns them into its own fake
 * model's events and its own message types, so that all of them replay the same answers.
 */

/** W1: text deltas of one streamed answer, and their characters. */
export const STREAM_DELTAS = 10_000;
/** W2: sequential tool steps in one turn, each one call to a trivial async tool. */
export const TOOL_STEPS = 200;
/** W3: calls of one step to a read-only tool that awaits a timer. */
export const PARALLEL_CALLS = 100;
export const PARALLEL_DELAY_MS = 10;
/** W4: messages of history before the measured turn. */
export const HISTORY_MESSAGES = 2_000;

/** The user's message of every measured turn. */
export const USER_TEXT = 'Run the workload.';
/** The answer after the tools, in W2, W3 and W5. */
export const FINAL_TEXT = 'All done.';
/** The one delta of W4's answer. */
export const SHORT_TEXT = 'ok';

/** Token usage the fake models report with every answer (so token accounting runs). */
export const USAGE = { inputTokens: 120, outputTokens: 30 };

/** The tool of W2/W5: its JSON schema (every runtime validates the arguments against it) and its answer. */
export const ECHO_TOOL = {
  name: 'echo',
  description: 'Returns its argument.',
  schema: {
    type: 'object',
    properties: { n: { type: 'integer' } },
    required: ['n'],
    additionalProperties: false,
  },
  /** The answer; every runtime calls it from an async tool (`execute: async ...`). */
  run: (n) => `echo ${n}`,
};

/** The tool of W3. */
export const WAIT_TOOL = {
  name: 'wait',
  description: 'Waits a little and answers.',
  schema: ECHO_TOOL.schema,
};

/** The 10,000 deltas of W1: four characters each. */
export function streamDeltas() {
  const deltas = new Array(STREAM_DELTAS);
  for (let index = 0; index < STREAM_DELTAS; index++)
    deltas[index] = `${`${index % 1000}`.padStart(3, '0')} `;
  return deltas;
}

/** The call id of W2 step `index` or of W3 call `index`. */
export function callId(index) {
  return `call_${index}`;
}

/** The raw JSON arguments of a call. */
export function callArguments(index) {
  return `{"n":${index}}`;
}

/**
 * W4's earlier history, runtime-neutral: 500 rounds of a user message, a tool call, its result and the
 * assistant's answer (2,000 messages).
 */
export function neutralHistory() {
  const history = [];
  for (let round = 0; history.length < HISTORY_MESSAGES; round++) {
    const id = `hist_${round}`;
    history.push({ kind: 'user', text: `Question number ${round}: what does the tool say about it?` });
    history.push({ kind: 'tool_call', callId: id, toolName: ECHO_TOOL.name, n: round });
    history.push({ kind: 'tool_result', callId: id, toolName: ECHO_TOOL.name, text: ECHO_TOOL.run(round) });
    history.push({ kind: 'assistant', text: `The tool answered ${ECHO_TOOL.run(round)}, as expected.` });
  }
  return history;
}

/** Throws unless a run produced what the workload expects, so that no runtime can skip work. */
export function check(name, actual, expected) {
  if (actual.text !== expected.text) {
    throw new Error(
      `${name}: final text differs (${actual.text.length} chars, expected ${expected.text.length}): ` +
        `${JSON.stringify(actual.text.slice(0, 40))}…`,
    );
  }
  if (actual.toolCalls !== expected.toolCalls) {
    throw new Error(`${name}: ${actual.toolCalls} tool calls, expected ${expected.toolCalls}`);
  }
}

/**
 * The scripted answers of W1–W4 in a runtime's own format, built from its two answer makers:
 * `textAnswer(deltas)` and `toolAnswer(toolName, callIndexes)`.
 */
export function answerPlans({ textAnswer, toolAnswer }) {
  const toolLoop = [];
  for (let step = 0; step < TOOL_STEPS; step++) toolLoop.push(toolAnswer(ECHO_TOOL.name, [step]));
  toolLoop.push(textAnswer([FINAL_TEXT]));
  return {
    stream: [textAnswer(streamDeltas())],
    toolLoop,
    parallel: [
      toolAnswer(
        WAIT_TOOL.name,
        Array.from({ length: PARALLEL_CALLS }, (_, index) => index),
      ),
      textAnswer([FINAL_TEXT]),
    ],
    short: [textAnswer([SHORT_TEXT])],
  };
}

/**
 * One workload of a runtime module by the name the profiling tools take (stream, toolLoop, parallel,
 * historyEmpty, historyLong, durable), as a function that runs it once.
 */
export function workloadByName(module, name) {
  if (name === 'historyEmpty') return () => module.workloads.history(false);
  if (name === 'historyLong') return () => module.workloads.history(true);
  return () => module.workloads[name]();
}
