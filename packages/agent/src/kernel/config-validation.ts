/**
 * The checks `build()` makes on the parts of an AgentConfig that are objects (personality, environment
 * context) and on the config's own keys. Each returns the runtime's own frozen copy, so a host that changes
 * its config object after build() changes nothing in a running agent.
 */

import { AgentError, type AgentErrorCode, invalidConfig } from './error.js';
import type { Budget, BudgetConfig } from './types.js';
import { describeKind, isPlainObject } from './value-kind.js';

/** Every field an AgentConfig may hold; anything else is a typo the host should hear about. */
export const AGENT_CONFIG_FIELDS: readonly string[] = [
  'defaultModel',
  'systemInstructions',
  'personality',
  'environmentContext',
  'toolTimeoutMs',
  'maxToolCallsPerTurn',
  'approvalWindowMs',
  'compactThreshold',
  'compactPrompt',
  'maxToolResultShare',
  'autoCompact',
  'memoryNamespace',
  'memoryMaxItems',
  'memoryCheckpointInterval',
  'compactModel',
  'memoryModel',
  'onBackgroundError',
  'maxActiveSessions',
  'maxSubagentDepth',
  'budget',
  'fallbackModels',
  'fallbackSticky',
];

const PERSONALITY_FIELDS: readonly string[] = ['name', 'description'];
const ENVIRONMENT_FIELDS: readonly string[] = ['cwd', 'platform', 'shell', 'date', 'timezone', 'extra'];

/** Throws INVALID_CONFIG for a key of `value` not in `known`. */
export function rejectUnknownFields(where: string, value: object, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw invalidConfig(`${where} has the unknown field '${key}'; the fields are ${known.join(', ')}`);
    }
  }
}

function optionalString(name: string, value: unknown, what: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw invalidConfig(`${name} must be a string (${what}), got ${describeKind(value)}`);
  return value;
}

/** What `personality` holds once checked. */
interface CheckedPersonality {
  readonly name?: string;
  readonly description: string;
}

/** Checks `personality` ({ name?, description }); undefined when absent. */
export function checkPersonality(value: unknown): CheckedPersonality | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    throw invalidConfig(
      `personality must be an object { name?: string, description: string } or left out, got ${describeKind(value)}`,
    );
  }
  rejectUnknownFields('personality', value, PERSONALITY_FIELDS);
  const description = value.description;
  if (typeof description !== 'string') {
    throw invalidConfig(
      `personality.description must be a string (who the agent is), got ${describeKind(description)}`,
    );
  }
  const name = optionalString('personality.name', value.name, "the agent's name");
  return Object.freeze(name === undefined ? { description } : { name, description });
}

/** What `environmentContext` holds once checked. */
interface CheckedEnvironment {
  readonly cwd?: string;
  readonly platform?: string;
  readonly shell?: string;
  readonly date?: string;
  readonly timezone?: string;
  readonly extra?: Readonly<Record<string, string>>;
}

/** Checks `environmentContext` (string fields and `extra`, a record of strings); undefined when absent. */
export function checkEnvironmentContext(value: unknown): CheckedEnvironment | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    throw invalidConfig(
      `environmentContext must be an object { cwd?, platform?, shell?, date?, timezone?, extra? } of strings or left out, got ${describeKind(value)}`,
    );
  }
  rejectUnknownFields('environmentContext', value, ENVIRONMENT_FIELDS);
  const checked: { -readonly [K in keyof CheckedEnvironment]: CheckedEnvironment[K] } = {};
  for (const field of ['cwd', 'platform', 'shell', 'date', 'timezone'] as const) {
    const text = optionalString(`environmentContext.${field}`, value[field], 'a line of the prompt');
    if (text !== undefined) checked[field] = text;
  }
  const extra = value.extra;
  if (extra !== undefined) {
    if (!isPlainObject(extra)) {
      throw invalidConfig(
        `environmentContext.extra must be an object of name → string, got ${describeKind(extra)}`,
      );
    }
    const copy: Record<string, string> = {};
    for (const [key, text] of Object.entries(extra)) {
      if (key.trim() === '' || /[\r\n]/.test(key)) {
        throw invalidConfig(
          `environmentContext.extra has the name ${JSON.stringify(key)}; a name must be non-empty and on one line`,
        );
      }
      if (typeof text !== 'string') {
        throw invalidConfig(`environmentContext.extra.${key} must be a string, got ${describeKind(text)}`);
      }
      copy[key] = text;
    }
    checked.extra = Object.freeze(copy);
  }
  return Object.freeze(checked);
}

/** Checks `systemInstructions` (an array of strings) and returns a frozen copy. */
export function checkSystemInstructions(value: unknown): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value)) {
    throw invalidConfig(`systemInstructions must be an array of strings, got ${describeKind(value)}`);
  }
  const copy: string[] = [];
  // An index loop, not `some`: a hole in a sparse array is a missing instruction too.
  for (let index = 0; index < value.length; index += 1) {
    const line: unknown = value[index];
    if (typeof line !== 'string') {
      throw invalidConfig(`systemInstructions[${index}] must be a string, got ${describeKind(line)}`);
    }
    copy.push(line);
  }
  return Object.freeze(copy);
}

/** Checks `maxToolResultShare`: a number in (0, 1], the share of the window one tool result may fill; default 0.25. */
export function checkToolResultShare(value: unknown): number {
  if (value === undefined) return 0.25;
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw invalidConfig(
      `maxToolResultShare must be a number in (0, 1] (the share of the context window one tool result may fill), got ${describeKind(value)}`,
    );
  }
  return value;
}

/** Checks `autoCompact`: a boolean, default true (false leaves compaction to `Session.compact`). */
export function checkAutoCompact(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'boolean') {
    throw invalidConfig(`autoCompact must be true, false or left out, got ${describeKind(value)}`);
  }
  return value;
}

const BUDGET_FIELDS = ['maxCostUsd', 'maxTokens', 'maxModelCalls'] as const;

/**
 * Checks one budget `{ maxCostUsd?, maxTokens?, maxModelCalls? }` (`label` names it in the message); throws
 * `code` (INVALID_CONFIG for the agent's, INVALID_INPUT for a session's or a turn's).
 */
export function checkBudget(label: string, value: unknown, code: AgentErrorCode): Budget | undefined {
  // Most turns give no budget: answered before anything is made.
  if (value === undefined) return undefined;
  const fail = (message: string): never => {
    throw new AgentError({ code, message });
  };
  if (!isPlainObject(value)) {
    return fail(
      `${label} must be an object { maxCostUsd?, maxTokens?, maxModelCalls? }, got ${describeKind(value)}`,
    );
  }
  const budget: Budget = {};
  for (const key of Object.keys(value)) {
    if (!(BUDGET_FIELDS as readonly string[]).includes(key)) {
      fail(`${label} has the unknown field '${key}'; the fields are ${BUDGET_FIELDS.join(', ')}`);
    }
  }
  const cost = value.maxCostUsd;
  if (cost !== undefined) {
    if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) {
      fail(`${label}.maxCostUsd must be a finite number of US dollars, 0 or more, got ${describeKind(cost)}`);
    }
    budget.maxCostUsd = cost as number;
  }
  for (const key of ['maxTokens', 'maxModelCalls'] as const) {
    const count = value[key];
    if (count === undefined) continue;
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
      fail(`${label}.${key} must be a whole number, 0 or more, got ${describeKind(count)}`);
    }
    budget[key] = count as number;
  }
  return budget;
}

/** Checks `{ turn?, session? }`, each a budget; throws `code` as checkBudget does. */
export function checkBudgetConfig(
  label: string,
  value: unknown,
  code: AgentErrorCode,
): BudgetConfig | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    throw new AgentError({
      code,
      message: `${label} must be an object { turn?, session? }, got ${describeKind(value)}`,
    });
  }
  const config: BudgetConfig = {};
  for (const key of Object.keys(value)) {
    if (key !== 'turn' && key !== 'session') {
      throw new AgentError({
        code,
        message: `${label} has the unknown field '${key}'; the fields are turn, session`,
      });
    }
  }
  const turn = checkBudget(`${label}.turn`, value.turn, code);
  if (turn !== undefined) config.turn = turn;
  const session = checkBudget(`${label}.session`, value.session, code);
  if (session !== undefined) config.session = session;
  return config;
}

/** Checks a list of model ids to fall back on (`fallbackModels`); throws `code`. */
export function checkModelIds(
  label: string,
  value: unknown,
  code: AgentErrorCode,
): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((id) => typeof id !== 'string' || id === '')) {
    throw new AgentError({
      code,
      message: `${label} must be an array of registered model ids (non-empty strings)`,
    });
  }
  return [...(value as string[])];
}

/** A boolean field, false when left out; throws INVALID_CONFIG for anything else. */
export function checkFlag(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean')
    throw invalidConfig(`${name} must be true or false, got ${describeKind(value)}`);
  return value;
}
