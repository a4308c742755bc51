/** Structured output: a turn whose final answer must be JSON valid against a schema (issue 16). */

import type { TurnRunOptions } from '../kernel/approval-types.js';
import { AgentError, describeError, isAgentError } from '../kernel/error.js';
import { type SchemaCheck, SchemaCompiler } from '../kernel/json-schema.js';
import type { ContentBlock, JsonSchema } from '../kernel/types.js';
import { isPlainObject } from '../kernel/value-kind.js';
import type { ModelInfo, ResponseFormat } from '../ports/model.js';

/** What a turn's final answer must be: one JSON value valid against `schema`. */
export interface OutputOptions {
  /** A JSON Schema whose root is `type: 'object'` (draft-07 unless `$schema` says 2019-09 or 2020-12). */
  schema: JsonSchema;
  /** A name for the format, as providers want one (`[A-Za-z0-9_-]`, 1–64 characters); default `output`. */
  name?: string;
  /** Tells the model what the answer is for. */
  description?: string;
}

/** The second argument of `Session.sendMessage`. */
export interface SendMessageOptions extends TurnRunOptions {
  /** Makes the turn's final answer structured: see OutputOptions. */
  output?: OutputOptions;
}

/** A checked and compiled output request, made once per `sendMessage`. */
export interface StructuredOutputPlan {
  /** What the model request carries. */
  format: ResponseFormat;
  /** Checks a parsed answer against the schema. */
  check: SchemaCheck;
}

/** The verdict on a final answer. */
type OutputVerdict = { ok: true; value: unknown } | { ok: false; errors: string[]; text: string };

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const DEFAULT_NAME = 'output';

/**
 * Checks `sendMessage`'s options and compiles the output schema; undefined when no output is asked for.
 * Throws INVALID_INPUT for anything malformed, so a bad schema fails the call, not the turn.
 */
export function planStructuredOutput(options: unknown): StructuredOutputPlan | undefined {
  if (options === undefined) return undefined;
  if (!isPlainObject(options)) {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: 'sendMessage options must be an object, e.g. { output }',
    });
  }
  const output = options.output;
  if (output === undefined) return undefined;
  return compileOutput(output, { label: 'sendMessage options.output', code: 'INVALID_INPUT' });
}

/**
 * Checks one `{ schema, name?, description? }` and compiles its schema into a plan. `label` names it in
 * the messages and `code` is the error thrown for anything malformed: INVALID_INPUT for a call's options,
 * INVALID_CONFIG for a tool made once and used many times (`agentTool`). The schema is copied first, so a
 * caller changing its object later changes neither the check nor what the model is asked for.
 */
export function compileOutput(
  output: unknown,
  where: { label: string; code: 'INVALID_INPUT' | 'INVALID_CONFIG' },
): StructuredOutputPlan {
  const { label, code } = where;
  const fail = (message: string, cause?: unknown): AgentError =>
    new AgentError(cause === undefined ? { code, message } : { code, message, cause });
  if (!isPlainObject(output)) throw fail(`${label} must be an object { schema, name?, description? }`);
  const { name, description } = output;
  if (!isPlainObject(output.schema) || output.schema.type !== 'object') {
    throw fail(`${label}.schema must be a JSON Schema object whose root has type 'object'`);
  }
  if (name !== undefined && (typeof name !== 'string' || !NAME_PATTERN.test(name))) {
    throw fail(`${label}.name must be 1–64 characters of letters, digits, _ or -`);
  }
  if (description !== undefined && typeof description !== 'string') {
    throw fail(`${label}.description must be a string`);
  }
  let schema: JsonSchema;
  let check: SchemaCheck;
  try {
    schema = structuredClone(output.schema) as JsonSchema;
    check = new SchemaCompiler().compile(schema, 'output');
  } catch (error) {
    throw fail(`${label}.schema does not compile: ${describeError(error)}`, error);
  }
  const format: ResponseFormat = { type: 'json_schema', name: name ?? DEFAULT_NAME, schema, strict: true };
  if (description !== undefined) format.description = description;
  return { format, check };
}

/** The text of an answer (reasoning left out), as the model wrote it. */
function answerText(content: readonly ContentBlock[]): string {
  let text = '';
  for (const block of content) if (block.type === 'text') text += block.text;
  return text;
}

/** Models without native structured output often wrap JSON in a Markdown fence; the fence is not the answer. */
function withoutFence(text: string): string {
  const fenced = /^```[A-Za-z]*\s*\n([\s\S]*?)\n?```$/.exec(text);
  return fenced?.[1] ?? text;
}

/** Parses the final answer and checks it against the schema. */
export function judgeAnswer(plan: StructuredOutputPlan, content: readonly ContentBlock[]): OutputVerdict {
  const text = answerText(content);
  const trimmed = withoutFence(text.trim()).trim();
  if (trimmed === '') return { ok: false, errors: ['the answer is empty, not a JSON value'], text };
  let value: unknown;
  try {
    value = JSON.parse(trimmed) as unknown;
  } catch (error) {
    return { ok: false, errors: [`the answer is not JSON: ${describeError(error)}`], text };
  }
  const failure = plan.check(value);
  if (failure !== undefined) return { ok: false, errors: failure.split('; '), text };
  return { ok: true, value };
}

/** The message that starts the one repair round: it is saved in the history like any other. */
export function repairNotice(errors: readonly string[]): string {
  return [
    'Your last answer does not match the required output schema:',
    ...errors.map((error) => `- ${error}`),
    'Answer again with only the corrected JSON value: no prose, no code fence.',
  ].join('\n');
}

/** Marks an OutputInvalidError, so that one made by another copy of this package is still recognised. */
const OUTPUT_INVALID_BRAND = Symbol.for('youyou.agent.OutputInvalidError');

/** An AgentError OUTPUT_INVALID that keeps the validation errors and the raw answer. */
export class OutputInvalidError extends AgentError {
  /** What the schema check said of the last answer. */
  readonly validationErrors: readonly string[];
  /** The last answer's text, as the model wrote it (also kept in the assistant message). */
  readonly rawText: string;

  constructor(options: { errors: readonly string[]; text: string }) {
    super({
      code: 'OUTPUT_INVALID',
      message: `the final answer is not valid against the output schema after one repair round: ${options.errors.join('; ')}`,
    });
    this.validationErrors = [...options.errors];
    this.rawText = options.text;
    Object.defineProperty(this, OUTPUT_INVALID_BRAND, { value: true });
  }

  /** AgentError's plain-data view plus the validation errors (the raw text stays out of logs). */
  override toJSON(): ReturnType<AgentError['toJSON']> & { validationErrors: string[] } {
    return { ...super.toJSON(), validationErrors: [...this.validationErrors] };
  }
}

/** True for an OutputInvalidError, even one made by another copy of this package (STYLE 6: a brand, not instanceof). */
export function isOutputInvalidError(value: unknown): value is OutputInvalidError {
  return isAgentError(value) && (value as unknown as Record<symbol, unknown>)[OUTPUT_INVALID_BRAND] === true;
}

/**
 * The system prompt section for a model that does not enforce `responseFormat` itself: without it such a
 * model would not know the answer must be JSON. Empty for a model that does.
 */
export function outputPromptSection(plan: StructuredOutputPlan, model: ModelInfo): string {
  if (model.capabilities.structuredOutput === true) return '';
  const { name, description, schema } = plan.format;
  return [
    `Your final answer in this turn (after any tool calls) must be only a JSON value named '${name}', no prose and no code fence, valid against this JSON Schema:`,
    ...(description === undefined ? [] : [`It is: ${description}`]),
    JSON.stringify(schema),
  ].join('\n');
}
