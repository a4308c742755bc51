/**
 * The check of the events a model provider streams (the ModelProvider port). A provider is code the runtime
 * does not trust: every event is read field by field and rebuilt, so nothing ill-typed reaches the turn's
 * events, the context or the session log. A bad event is a PROVIDER_ERROR naming the provider and the field,
 * except where its meaning is clear: `tool_call` arguments given as an object are taken as their JSON text.
 */

import { AgentError, describeError, isAgentError } from '../kernel/error.js';
import type { TokenUsage } from '../kernel/types.js';
import { describeKind, isPlainObject, jsonText } from '../kernel/value-kind.js';
import type { ChatEvent } from '../ports/model.js';

type StopReason = Extract<ChatEvent, { type: 'done' }>['stopReason'];

const STOP_REASONS: readonly string[] = ['end_turn', 'tool_use', 'max_tokens', 'other'];
const EVENT_TYPES = 'text_delta, reasoning_delta, reasoning_signature, tool_call, usage, done';

/** Reads and rebuilds the events of one model answer; one instance per stream (it remembers the call ids). */
export class ChatEventChecker {
  readonly #providerId: string;
  /**
   * The call ids of this answer so far (two calls of one id cannot be told apart): the first one alone, then a
   * Set from the second call on; most answers have one call, and a Set is a hash table to make.
   */
  #firstCallId: string | undefined;
  #callIds: Set<string> | undefined;

  constructor(providerId: string) {
    this.#providerId = providerId;
  }

  /** The event as the runtime may use it, or throws PROVIDER_ERROR (also when reading the value throws). */
  check(value: unknown): ChatEvent {
    try {
      return this.#check(value);
    } catch (error) {
      if (isAgentError(error)) throw error;
      throw this.#error(`sent an event that could not be read (${describeError(error)})`, error);
    }
  }

  #check(value: unknown): ChatEvent {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw this.#error(`sent an event that is not an object: ${describeKind(value)}`);
    }
    const event = value as Record<string, unknown>;
    const type = event.type;
    switch (type) {
      case 'text_delta':
        return { type, text: this.#text(type, 'text', event.text) };
      case 'reasoning_delta':
        return { type, text: this.#text(type, 'text', event.text) };
      case 'reasoning_signature':
        return { type, signature: this.#text(type, 'signature', event.signature) };
      case 'tool_call':
        return this.#toolCall(event);
      case 'usage':
        return { type, usage: this.#usage(event.usage) };
      case 'done': {
        const stopReason = event.stopReason;
        if (typeof stopReason !== 'string' || !STOP_REASONS.includes(stopReason)) {
          throw this.#field(type, 'stopReason', stopReason, `one of ${STOP_REASONS.join(', ')}`);
        }
        const responseModel = event.responseModel;
        if (responseModel === undefined) return { type, stopReason: stopReason as StopReason };
        return {
          type,
          stopReason: stopReason as StopReason,
          responseModel: this.#text(type, 'responseModel', responseModel),
        };
      }
      default:
        throw this.#error(
          typeof type === 'string'
            ? `sent an event of the unknown type ${JSON.stringify(type)}; the types are ${EVENT_TYPES}`
            : `sent an event whose type is ${describeKind(type)}; the types are ${EVENT_TYPES}`,
        );
    }
  }

  #toolCall(event: Record<string, unknown>): ChatEvent {
    const callId = event.callId;
    if (typeof callId !== 'string' || callId === '') {
      throw this.#field('tool_call', 'callId', callId, 'a non-empty string');
    }
    const toolName = event.toolName;
    if (typeof toolName !== 'string' || toolName === '') {
      throw this.#field('tool_call', 'toolName', toolName, 'a non-empty string');
    }
    if (callId === this.#firstCallId || this.#callIds?.has(callId) === true) {
      throw this.#error(`sent two tool_call events with the callId ${JSON.stringify(callId)} in one answer`);
    }
    if (this.#firstCallId === undefined) this.#firstCallId = callId;
    else {
      this.#callIds ??= new Set();
      this.#callIds.add(callId);
    }
    return { type: 'tool_call', callId, toolName, arguments: this.#arguments(event.arguments) };
  }

  /** The raw JSON text of a call's arguments; an object (a provider that parsed them already) becomes its JSON. */
  #arguments(value: unknown): string {
    if (typeof value === 'string') return value;
    if (isPlainObject(value)) {
      const text = jsonText(value);
      if (text !== undefined) return text;
    }
    throw this.#field('tool_call', 'arguments', value, 'the JSON text of the arguments');
  }

  #usage(value: unknown): TokenUsage {
    if (!isPlainObject(value)) {
      throw this.#field(
        'usage',
        'usage',
        value,
        '{ inputTokens, outputTokens, cachedInputTokens?, cacheWriteTokens?, reasoningTokens? }',
      );
    }
    const usage: TokenUsage = {
      inputTokens: this.#count('inputTokens', value.inputTokens),
      outputTokens: this.#count('outputTokens', value.outputTokens),
    };
    if (value.cachedInputTokens !== undefined) {
      usage.cachedInputTokens = this.#count('cachedInputTokens', value.cachedInputTokens);
    }
    if (value.cacheWriteTokens !== undefined) {
      usage.cacheWriteTokens = this.#count('cacheWriteTokens', value.cacheWriteTokens);
    }
    if (value.reasoningTokens !== undefined) {
      usage.reasoningTokens = this.#count('reasoningTokens', value.reasoningTokens);
    }
    // The cache and reasoning counts are parts of the totals; more than the whole is a provider's mistake
    // that would make every count and cost built on it wrong.
    const cached = (usage.cachedInputTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
    if (cached > usage.inputTokens) {
      throw this.#error(
        `sent usage whose cachedInputTokens + cacheWriteTokens (${cached}) exceed inputTokens (${usage.inputTokens}); inputTokens must count the whole prompt, cached tokens included`,
      );
    }
    if ((usage.reasoningTokens ?? 0) > usage.outputTokens) {
      throw this.#error(
        `sent usage whose reasoningTokens (${usage.reasoningTokens}) exceed outputTokens (${usage.outputTokens}); outputTokens must count the whole answer, reasoning included`,
      );
    }
    return usage;
  }

  #count(field: string, value: unknown): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw this.#field('usage', `usage.${field}`, value, 'a whole number of tokens, 0 or more');
    }
    return value;
  }

  #text(type: string, field: string, value: unknown): string {
    if (typeof value !== 'string') throw this.#field(type, field, value, 'a string');
    return value;
  }

  #field(type: string, field: string, value: unknown, expected: string): AgentError {
    return this.#error(
      `sent a ${type} event whose ${field} is ${describeKind(value)}; it must be ${expected}`,
    );
  }

  #error(what: string, cause?: unknown): AgentError {
    return new AgentError({
      code: 'PROVIDER_ERROR',
      message: `provider '${this.#providerId}' ${what}`,
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
