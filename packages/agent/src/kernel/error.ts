import { jsonOrString } from './value-kind.js';

/** Every code an AgentError can carry; the code is the stable part a caller matches on. */
export type AgentErrorCode =
  | 'NO_MODEL_PROVIDER'
  | 'NAME_CONFLICT'
  | 'SKILL_DEPENDENCY_NOT_MET'
  | 'PLUGIN_INIT_FAILED'
  | 'STORAGE_DUPLICATE'
  | 'INVALID_DEFAULT_MODEL'
  | 'SESSION_BUSY'
  | 'TURN_BUSY'
  | 'MODEL_NOT_SUPPORTED'
  | 'PROVIDER_ERROR'
  | 'TOOL_EXECUTION_ERROR'
  | 'TOOL_TIMEOUT'
  | 'TOOL_NOT_FOUND'
  | 'SKILL_NOT_FOUND'
  | 'SESSION_NOT_FOUND'
  | 'STORAGE_ERROR'
  | 'MAX_TOOL_CALLS_EXCEEDED'
  | 'COMPACT_ERROR'
  | 'REQUEST_CANCELLED'
  | 'INVALID_INPUT'
  | 'INVALID_CONFIG'
  | 'PLUGIN_ERROR'
  | 'MEMORY_ERROR'
  | 'SESSION_CLOSED'
  /** A turn id that a rewind or a fork cannot use: unknown, or no longer in the context (rewound, summarised). */
  | 'TURN_NOT_FOUND'
  /** A structured-output turn's final answer was not valid against its schema, even after one repair round. */
  | 'OUTPUT_INVALID'
  /** A model call was not made: it could have spent more than a turn's or a session's budget allows. */
  | 'BUDGET_EXCEEDED'
  /** A BeforeModelCall or AfterModelCall hook stopped a model call or its answer (a guardrail). */
  | 'MODEL_CALL_BLOCKED'
  /** An unexpected failure inside the runtime (a bug, or a part that broke its contract); `cause` holds it. */
  | 'INTERNAL_ERROR';

/** The part of the system an error came from. */
export type SourceComponent = 'provider' | 'tool' | 'plugin' | 'storage' | 'agent';

/** What `new AgentError(...)` takes. */
export interface AgentErrorOptions {
  code: AgentErrorCode;
  /** Says what went wrong and, where it can, what to fix; `[CODE] ` is put in front of it. */
  message: string;
  /** True when the same request may succeed if sent again (429, 5xx, a dropped connection). */
  retryable?: boolean;
  /** Defaults from the code: PROVIDER_ERROR → provider, TOOL_* → tool, PLUGIN_* → plugin, STORAGE_ERROR → storage. */
  sourceComponent?: SourceComponent;
  /** The lower-level error this one wraps. */
  cause?: unknown;
  /** Set by provider adapters when the request was too large for the model's context window. */
  contextLengthExceeded?: boolean;
}

const BRAND = Symbol.for('youyou.agent.AgentError');

function defaultSource(code: AgentErrorCode): SourceComponent {
  switch (code) {
    case 'PROVIDER_ERROR':
      return 'provider';
    case 'TOOL_EXECUTION_ERROR':
    case 'TOOL_TIMEOUT':
    case 'TOOL_NOT_FOUND':
      return 'tool';
    case 'PLUGIN_INIT_FAILED':
    case 'PLUGIN_ERROR':
    case 'MODEL_CALL_BLOCKED':
      return 'plugin';
    case 'STORAGE_ERROR':
    case 'STORAGE_DUPLICATE':
      return 'storage';
    default:
      return 'agent';
  }
}

/**
 * The one error type of the runtime. Programmer mistakes (bad config, a busy session) reject the call
 * at once; failures during a turn arrive as `error` events carrying an AgentError.
 */
export class AgentError extends Error {
  /** The stable code to match on. */
  readonly code: AgentErrorCode;
  /** True when sending the same request again may succeed. */
  readonly retryable: boolean;
  /** The part of the system the error came from. */
  readonly sourceComponent: SourceComponent;
  /** True when a provider rejected the request as too large for the context window. */
  readonly contextLengthExceeded: boolean;
  override readonly name = 'AgentError';

  constructor(options: AgentErrorOptions) {
    super(
      `[${options.code}] ${options.message}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = options.code;
    this.retryable = options.retryable ?? false;
    this.sourceComponent = options.sourceComponent ?? defaultSource(options.code);
    this.contextLengthExceeded = options.contextLengthExceeded ?? false;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** A plain-data view, for logs and JSON output (Error's own fields do not serialise). */
  toJSON(): {
    name: string;
    code: AgentErrorCode;
    message: string;
    retryable: boolean;
    sourceComponent: SourceComponent;
  } {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      sourceComponent: this.sourceComponent,
    };
  }
}

/** True for an AgentError, even one made by another copy of this package. */
export function isAgentError(value: unknown): value is AgentError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** What the INVALID_* constructors take besides the message. */
interface InvalidOptions {
  /** Default `agent`; a storage's own checks say `storage`. */
  sourceComponent?: SourceComponent;
  /** The lower-level error that showed the value was bad (a failed parse). */
  cause?: unknown;
}

/** An INVALID_INPUT error: a call got an argument it cannot use; the message says which and what to pass. */
export function invalidInput(message: string, options: InvalidOptions = {}): AgentError {
  return new AgentError({ code: 'INVALID_INPUT', message, ...options });
}

/** An INVALID_CONFIG error: a setting cannot be used; the message names the field and says what to fix. */
export function invalidConfig(message: string, options: InvalidOptions = {}): AgentError {
  return new AgentError({ code: 'INVALID_CONFIG', message, ...options });
}

/** The message of any thrown value, for wrapping it into an AgentError. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return jsonOrString(error);
}

/** Returns `error` when it is an AgentError already, else wraps it with the given code. */
export function toAgentError(error: unknown, code: AgentErrorCode, context?: string): AgentError {
  if (isAgentError(error)) return error;
  const detail = describeError(error);
  return new AgentError({ code, message: context ? `${context}: ${detail}` : detail, cause: error });
}
