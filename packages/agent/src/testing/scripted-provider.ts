import { AgentError } from '../kernel/error.js';
import type { TokenUsage } from '../kernel/types.js';
import { cancelledError } from '../model/model-call.js';
import type { ChatEvent, ChatPurpose, ChatRequest, ModelInfo, ModelProvider } from '../ports/model.js';

/** Why a model stopped, as a `done` ChatEvent says it. */
export type StopReason = Extract<ChatEvent, { type: 'done' }>['stopReason'];

/** One step of a scripted answer; each becomes ChatEvents, a wait or a thrown error. */
export type ScriptStep =
  | { type: 'text'; text: string }
  /**
   * A structured answer: `JSON.stringify(value)` streamed as `text_delta`s, as a provider streams the answer
   * to a `responseFormat` request; `chunks` (default 1) splits the text into that many deltas.
   */
  | { type: 'json'; value: unknown; chunks?: number }
  /** A `reasoning_delta`, followed by a `reasoning_signature` when `signature` is given. */
  | { type: 'reasoning'; text: string; signature?: string }
  /**
   * A whole `tool_call`. `arguments`: a string is sent as the raw JSON text (so a test can send broken
   * JSON); anything else is JSON.stringify'd; absent = `{}`. `callId` defaults to `call_${n}`, n counting
   * the provider's tool calls from 1.
   */
  | { type: 'tool_call'; toolName: string; arguments?: unknown; callId?: string }
  | { type: 'usage'; usage: TokenUsage }
  /** Throws `error` as it is (the runtime wraps anything that is not an AgentError). */
  | { type: 'error'; error: unknown }
  /** Waits `ms` milliseconds; an abort during the wait throws REQUEST_CANCELLED. */
  | { type: 'delay'; ms: number }
  /** Yields nothing more until the request's signal aborts, then throws REQUEST_CANCELLED. */
  | { type: 'hang' }
  /** Ends the answer; `responseModel` is sent as the model that answered, when given. */
  | { type: 'done'; stopReason: StopReason; responseModel?: string };

/** One scripted answer: its steps, or a function that picks them from the request (given a snapshot). */
export type ScriptedResponse = readonly ScriptStep[] | ((request: ChatRequest) => readonly ScriptStep[]);

/** What `new ScriptedModelProvider(...)` takes; everything is optional. */
export interface ScriptedModelProviderOptions {
  /** Default `'scripted'`. */
  id?: string;
  /** Default: one model, `scriptedModel()`. */
  models?: readonly ModelInfo[];
  /** Answers for requests of any purpose, in order. */
  responses?: readonly ScriptedResponse[];
  /** Answers for requests of one purpose; a request takes from its purpose's queue while it has entries. */
  byPurpose?: Partial<Record<ChatPurpose, readonly ScriptedResponse[]>>;
  /**
   * Reject, as a real API does, every request larger than its model's context window (by `requestTokens`):
   * the stream throws PROVIDER_ERROR with `contextLengthExceeded` and no answer is taken from the queues.
   */
  enforceContextWindow?: boolean;
}

/**
 * The size of a request in tokens, at four characters a token, counting its JSON as a provider receives it:
 * the system prompt, the messages and the tool specs.
 */
export function requestTokens(request: ChatRequest): number {
  const chars =
    request.systemPrompt.length +
    JSON.stringify(request.messages).length +
    JSON.stringify(request.tools).length;
  return Math.ceil(chars / 4);
}

/**
 * A ModelInfo for tests: `scripted-model`, 128,000 tokens of context, tool use, vision and streaming, unless
 * overridden. `structuredOutput` is left out (false): pass `capabilities: { structuredOutput: true, ... }` for a
 * model that honours `responseFormat`. No pricing unless given.
 */
export function scriptedModel(overrides: Partial<ModelInfo> = {}): ModelInfo {
  const info: ModelInfo = {
    id: overrides.id ?? 'scripted-model',
    displayName: overrides.displayName ?? 'Scripted model',
    contextWindow: overrides.contextWindow ?? 128_000,
    capabilities: { toolUse: true, vision: true, streaming: true, ...overrides.capabilities },
  };
  if (overrides.pricing !== undefined) info.pricing = { ...overrides.pricing };
  return info;
}

/** Resolves after `ms`, or rejects with REQUEST_CANCELLED on abort; leaves no listener or timer behind. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(cancelledError());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelledError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Rejects with REQUEST_CANCELLED once the signal aborts (a `once` listener removes itself then). */
function hangUntilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) {
      reject(cancelledError());
      return;
    }
    signal.addEventListener('abort', () => reject(cancelledError()), { once: true });
  });
}

/** The JSON text of a value, cut into `chunks` text deltas of about equal length. */
function* jsonDeltas(value: unknown, chunks: number): Generator<ChatEvent> {
  const text = JSON.stringify(value) ?? 'null';
  const count = Math.max(1, Math.min(Math.floor(chunks), text.length));
  const size = Math.ceil(text.length / count);
  for (let start = 0; start < text.length; start += size) {
    yield { type: 'text_delta', text: text.slice(start, start + size) };
  }
}

function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '{}';
  return JSON.stringify(value) ?? '{}';
}

/**
 * A ModelProvider that answers from scripts queued in advance, for testing agents without a network.
 * Every request is recorded in `requests` (a deep copy taken when `chat` is called); each takes the next
 * response of its purpose's queue (`byPurpose`/`enqueueFor`) while that has entries, else of the
 * default queue. When both are empty, the stream throws PROVIDER_ERROR `script exhausted`. A script
 * without a `done` step ends with one: `tool_use` if it made a tool call, else `end_turn`.
 */
export class ScriptedModelProvider implements ModelProvider {
  /** The provider id the runtime registers. */
  readonly id: string;
  /** The models offered. */
  readonly models: readonly ModelInfo[];
  /** Every request received, in order, as it was when `chat` was called. */
  readonly requests: ChatRequest[] = [];
  readonly #queue: ScriptedResponse[];
  readonly #byPurpose = new Map<ChatPurpose, ScriptedResponse[]>();
  #toolCallCount = 0;
  readonly #enforceContextWindow: boolean;

  constructor(options: ScriptedModelProviderOptions = {}) {
    this.id = options.id ?? 'scripted';
    this.#enforceContextWindow = options.enforceContextWindow ?? false;
    this.models = options.models ?? [scriptedModel()];
    this.#queue = [...(options.responses ?? [])];
    for (const [purpose, responses] of Object.entries(options.byPurpose ?? {})) {
      if (responses !== undefined) this.#byPurpose.set(purpose as ChatPurpose, [...responses]);
    }
  }

  /** Adds answers to the default queue. */
  enqueue(...responses: ScriptedResponse[]): this {
    this.#queue.push(...responses);
    return this;
  }

  /** Adds answers for requests of one purpose only. */
  enqueueFor(purpose: ChatPurpose, ...responses: ScriptedResponse[]): this {
    const queue = this.#byPurpose.get(purpose);
    if (queue === undefined) this.#byPurpose.set(purpose, [...responses]);
    else queue.push(...responses);
    return this;
  }

  /** How many answers are still queued, over all queues. */
  get pending(): number {
    let count = this.#queue.length;
    for (const queue of this.#byPurpose.values()) count += queue.length;
    return count;
  }

  /** Records the request, takes its answer from the queues and plays it. */
  chat(request: ChatRequest, signal: AbortSignal): AsyncIterable<ChatEvent> {
    const snapshot = structuredClone(request);
    this.requests.push(snapshot);
    const window = this.models.find((model) => model.id === request.modelId)?.contextWindow;
    if (this.#enforceContextWindow && window !== undefined && requestTokens(request) > window) {
      return this.#reject(requestTokens(request), window);
    }
    const purposeQueue = this.#byPurpose.get(request.purpose);
    const response =
      purposeQueue !== undefined && purposeQueue.length > 0 ? purposeQueue.shift() : this.#queue.shift();
    return this.#play({ response, snapshot, signal });
  }

  // biome-ignore lint/correctness/useYield: the stream fails before its first event, as an API's would.
  async *#reject(tokens: number, window: number): AsyncGenerator<ChatEvent, void, undefined> {
    throw new AgentError({
      code: 'PROVIDER_ERROR',
      message: `the request has ${tokens} tokens and the model's context window is ${window}`,
      contextLengthExceeded: true,
      retryable: false,
    });
  }

  async *#play(options: {
    response: ScriptedResponse | undefined;
    snapshot: ChatRequest;
    signal: AbortSignal;
  }): AsyncGenerator<ChatEvent, void, undefined> {
    const { response, snapshot, signal } = options;
    if (response === undefined) {
      throw new AgentError({
        code: 'PROVIDER_ERROR',
        message: `script exhausted: no response left for a '${snapshot.purpose}' request`,
        retryable: false,
      });
    }
    const steps = typeof response === 'function' ? response(snapshot) : response;
    let madeToolCall = false;
    let sawDone = false;
    for (const step of steps) {
      if (signal.aborted) throw cancelledError();
      switch (step.type) {
        case 'text':
          yield { type: 'text_delta', text: step.text };
          break;
        case 'json':
          yield* jsonDeltas(step.value, step.chunks ?? 1);
          break;
        case 'reasoning':
          yield { type: 'reasoning_delta', text: step.text };
          if (step.signature !== undefined) yield { type: 'reasoning_signature', signature: step.signature };
          break;
        case 'tool_call':
          this.#toolCallCount += 1;
          madeToolCall = true;
          yield {
            type: 'tool_call',
            callId: step.callId ?? `call_${this.#toolCallCount}`,
            toolName: step.toolName,
            arguments: argumentsText(step.arguments),
          };
          break;
        case 'usage':
          yield { type: 'usage', usage: { ...step.usage } };
          break;
        case 'error':
          throw step.error;
        case 'delay':
          await delay(step.ms, signal);
          break;
        case 'hang':
          await hangUntilAborted(signal);
          break;
        case 'done':
          sawDone = true;
          yield step.responseModel === undefined
            ? { type: 'done', stopReason: step.stopReason }
            : { type: 'done', stopReason: step.stopReason, responseModel: step.responseModel };
          break;
        default:
          throw new AgentError({
            code: 'INVALID_INPUT',
            message: `unknown script step type: ${String((step as { type?: unknown }).type)}`,
          });
      }
    }
    if (signal.aborted) throw cancelledError();
    if (!sawDone) yield { type: 'done', stopReason: madeToolCall ? 'tool_use' : 'end_turn' };
  }
}
