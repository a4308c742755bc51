import {
  AGENT_CONFIG_FIELDS,
  checkAutoCompact,
  checkBudgetConfig,
  checkEnvironmentContext,
  checkFlag,
  checkModelIds,
  checkPersonality,
  checkSystemInstructions,
  checkToolResultShare,
  rejectUnknownFields,
} from './config-validation.js';
import { type AgentError, invalidConfig } from './error.js';
import type { BudgetConfig } from './types.js';
import { describeKind, isPlainObject } from './value-kind.js';

/** Facts about where the agent runs, rendered into the dynamic part of the system prompt. */
export interface EnvironmentContext {
  cwd?: string;
  platform?: string;
  shell?: string;
  date?: string;
  timezone?: string;
  extra?: Record<string, string>;
}

/** Who the agent is, rendered after the system instructions. */
export interface Personality {
  name?: string;
  description: string;
}

/** The agent's configuration; every number has a default and a valid range checked by `build()`. */
export interface AgentConfig {
  defaultModel: string;
  systemInstructions?: string[];
  personality?: Personality;
  environmentContext?: EnvironmentContext;
  /** Bound on a tool call, a hook handler and the runtime's waits at close; default 120000. */
  toolTimeoutMs?: number;
  /** Default 100. */
  maxToolCallsPerTurn?: number;
  /**
   * How long the calls of a suspended turn wait for a decision (ms, up to a year); once it passes, the
   * undecided ones are denied when the turn is continued. Default: no window (they wait until decided).
   */
  approvalWindowMs?: number;
  /** Fraction of the context window at which the context is compacted; default 0.8, in (0, 1]. */
  compactThreshold?: number;
  /** Replaces the built-in compaction prompt. */
  compactPrompt?: string;
  /**
   * The share of the context window (what is left after the system prompt and tools) one tool result may fill
   * in the context; a longer one enters cut, head and tail kept, with a notice. Default 0.25, in (0, 1].
   */
  maxToolResultShare?: number;
  /** False turns automatic compaction off (before model calls and after a context-length error); default true. */
  autoCompact?: boolean;
  /** Default 'default'. */
  memoryNamespace?: string;
  /** How many memories the prompt holds; consolidation keeps the store at or under it. Default 50. */
  memoryMaxItems?: number;
  /** Turns between memory extractions; 0 = only at session close. Default 10. */
  memoryCheckpointInterval?: number;
  /** Model for compaction requests; default: the session's model. */
  compactModel?: string;
  /** Model for memory extraction and consolidation; default: the session's model. */
  memoryModel?: string;
  /** Receives errors that happen outside any turn; default: console.warn. */
  onBackgroundError?: (error: AgentError) => void;
  /** How many sessions may be active at once on this agent (a server's conversations); default 1. */
  maxActiveSessions?: number;
  /** How deep sub-agents may nest: 1 = a session's sub-agents call none; default 2. */
  maxSubagentDepth?: number;
  /** The default budget of every turn and of every session (a session's own config replaces each part). */
  budget?: BudgetConfig;
  /**
   * Registered model ids (any provider) a model call moves to, in order, when its model fails with a retryable
   * error (429, 529, 5xx, a timeout, a refused connection) after its provider's own retries.
   */
  fallbackModels?: string[];
  /**
   * True: after a call fell back, the session's next calls go first to the model that answered, until it fails
   * in turn (the session's own model is then tried last). Default false: every call tries the session's model first.
   */
  fallbackSticky?: boolean;
}

/** A skill: a prompt injected when the user writes `/name`, or that the model activates itself. */
export interface SkillDefinition {
  name: string;
  displayName?: string;
  description: string;
  prompt: string;
  requiredTools?: string[];
  allowImplicitInvocation?: boolean;
}

/** AgentConfig with every default filled in. */
export interface ResolvedConfig {
  defaultModel: string;
  systemInstructions: readonly string[];
  personality: Personality | undefined;
  environmentContext: EnvironmentContext | undefined;
  toolTimeoutMs: number;
  maxToolCallsPerTurn: number;
  approvalWindowMs: number | undefined;
  compactThreshold: number;
  compactPrompt: string | undefined;
  maxToolResultShare: number;
  autoCompact: boolean;
  memoryNamespace: string;
  memoryMaxItems: number;
  memoryCheckpointInterval: number;
  compactModel: string | undefined;
  memoryModel: string | undefined;
  onBackgroundError: (error: AgentError) => void;
  maxActiveSessions: number;
  maxSubagentDepth: number;
  budget: BudgetConfig;
  fallbackModels: readonly string[];
  fallbackSticky: boolean;
}

/** The largest delay setTimeout accepts. */
const MAX_TIMER_MS = 2_147_483_647;
/** The longest approval window: a year. */
export const MAX_APPROVAL_WINDOW_MS = 365 * 24 * 60 * 60 * 1000;

function integerInRange(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidConfig(`${name} must be an integer from ${min} to ${max}, got ${describeKind(value)}`);
  }
  return value;
}

function optionalText(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalidConfig(`${name} must be a non-empty string or left out, got ${describeKind(value)}`);
  }
  return value;
}

function defaultBackgroundErrorHandler(error: AgentError): void {
  console.warn(`youyou-agent: ${error.message}`);
}

/** A handler that throws must not break close(), shutdown() or a session's start. */
function guardBackgroundHandler(handler: (error: AgentError) => void): (error: AgentError) => void {
  return (error) => {
    try {
      handler(error);
    } catch {
      // The host's own handler failed; there is nowhere left to report to.
    }
  };
}

/** Checks every field of the config and fills in the defaults; throws INVALID_CONFIG. */
export function resolveConfig(config: AgentConfig): ResolvedConfig {
  if (!isPlainObject(config))
    throw invalidConfig(`the AgentConfig must be an object, got ${describeKind(config)}`);
  rejectUnknownFields('the AgentConfig', config, AGENT_CONFIG_FIELDS);
  const defaultModel = optionalText('defaultModel', config.defaultModel);
  if (defaultModel === undefined) throw invalidConfig('defaultModel must be a non-empty string');
  const instructions = checkSystemInstructions(config.systemInstructions);
  const personality = checkPersonality(config.personality);
  const environmentContext = checkEnvironmentContext(config.environmentContext);
  // Only undefined means "left out": a null is a mistake to report, not a default to apply.
  const threshold = config.compactThreshold === undefined ? 0.8 : config.compactThreshold;
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1)) {
    throw invalidConfig(`compactThreshold must be a number in (0, 1], got ${describeKind(threshold)}`);
  }
  if (config.onBackgroundError !== undefined && typeof config.onBackgroundError !== 'function') {
    throw invalidConfig(
      `onBackgroundError must be a function (error) => void or left out, got ${describeKind(config.onBackgroundError)}`,
    );
  }
  return {
    defaultModel,
    systemInstructions: instructions,
    personality,
    environmentContext,
    toolTimeoutMs: integerInRange('toolTimeoutMs', config.toolTimeoutMs, 120_000, 1, MAX_TIMER_MS),
    maxToolCallsPerTurn: integerInRange('maxToolCallsPerTurn', config.maxToolCallsPerTurn, 100, 1, 1_000_000),
    approvalWindowMs:
      config.approvalWindowMs === undefined
        ? undefined
        : integerInRange('approvalWindowMs', config.approvalWindowMs, 0, 1, MAX_APPROVAL_WINDOW_MS),
    compactThreshold: threshold,
    compactPrompt: optionalText('compactPrompt', config.compactPrompt),
    maxToolResultShare: checkToolResultShare(config.maxToolResultShare),
    autoCompact: checkAutoCompact(config.autoCompact),
    memoryNamespace: optionalText('memoryNamespace', config.memoryNamespace) ?? 'default',
    memoryMaxItems: integerInRange('memoryMaxItems', config.memoryMaxItems, 50, 1, 100_000),
    memoryCheckpointInterval: integerInRange(
      'memoryCheckpointInterval',
      config.memoryCheckpointInterval,
      10,
      0,
      1_000_000,
    ),
    compactModel: optionalText('compactModel', config.compactModel),
    memoryModel: optionalText('memoryModel', config.memoryModel),
    onBackgroundError: guardBackgroundHandler(config.onBackgroundError ?? defaultBackgroundErrorHandler),
    maxActiveSessions: integerInRange('maxActiveSessions', config.maxActiveSessions, 1, 1, 100_000),
    maxSubagentDepth: integerInRange('maxSubagentDepth', config.maxSubagentDepth, 2, 1, 100),
    budget: checkBudgetConfig('budget', config.budget, 'INVALID_CONFIG') ?? {},
    fallbackModels: checkModelIds('fallbackModels', config.fallbackModels, 'INVALID_CONFIG') ?? [],
    fallbackSticky: checkFlag('fallbackSticky', config.fallbackSticky),
  };
}
