/**
 * BeforeModelCall and AfterModelCall (guardrails around a model call): the provider wrapped so that the request
 * passes BeforeModelCall before it is sent, and the whole answer passes AfterModelCall before the caller sees any
 * of it. With no AfterModelCall handler the answer streams as it comes; with one it is held until the hook decided,
 * since an answer already streamed to a client cannot be taken back.
 */

import { AgentError } from '../kernel/error.js';
import type { ContentBlock, Message } from '../kernel/types.js';
import { describeKind, isPlainObject } from '../kernel/value-kind.js';
import { ChatEventChecker } from '../model/provider-events.js';
import type { ChatEvent, ChatRequest, ModelProvider } from '../ports/model.js';
import type { ModelCallAnswerData, ModelCallRequestData } from '../ports/plugin.js';
import { type HookRegistry, type HookScope, hookRunner } from './hook.js';

/** The provider with the model-call hooks around each call; the provider itself when neither hook has a handler. */
export function hookedProvider(
  hooks: HookRegistry,
  provider: ModelProvider,
  scope: HookScope,
): ModelProvider {
  if (!hooks.has('BeforeModelCall') && !hooks.has('AfterModelCall')) return provider;
  const before = hookRunner(hooks, 'BeforeModelCall', scope);
  const after = hookRunner(hooks, 'AfterModelCall', scope);
  return {
    id: provider.id,
    models: provider.models,
    chat: async (request, signal) => {
      // The request's copy for the hook is made only when a BeforeModelCall handler is there to see it.
      const sent = hooks.has('BeforeModelCall') ? await requestAfterHook(request, before, scope) : request;
      const stream = await provider.chat(sent, signal);
      if (!hooks.has('AfterModelCall')) return stream;
      return heldAnswer({ stream, request: sent, providerId: provider.id, after, scope });
    },
  };
}

type Runner = ReturnType<typeof hookRunner>;

/** The request as BeforeModelCall left it; throws MODEL_CALL_BLOCKED when a handler stopped it. */
async function requestAfterHook(
  request: ChatRequest,
  before: Runner,
  scope: HookScope,
): Promise<ChatRequest> {
  const data: ModelCallRequestData = {
    purpose: request.purpose,
    modelId: request.modelId,
    systemPrompt: request.systemPrompt,
    messages: structuredClone(request.messages),
  };
  const outcome = await before(data);
  if (outcome === undefined) return request;
  if (outcome.abortReason !== undefined) throw blocked('BeforeModelCall', outcome.abortReason);
  if (outcome.data === data) return request;
  const edit = readRequestEdit(outcome.data);
  if (typeof edit === 'string') {
    scope.reportError(badEdit('BeforeModelCall', edit));
    return request;
  }
  const systemPrompt = edit.systemPrompt ?? request.systemPrompt;
  return {
    ...request,
    systemPrompt,
    systemPromptParts: { ...request.systemPromptParts, stable: systemPrompt },
    messages: edit.messages ?? request.messages,
  };
}

/** A `continue_with` of BeforeModelCall read, or what is wrong with it. */
function readRequestEdit(value: unknown): { systemPrompt?: string; messages?: Message[] } | string {
  if (!isPlainObject(value))
    return `its data must be an object { systemPrompt?, messages? }, got ${describeKind(value)}`;
  const edit: { systemPrompt?: string; messages?: Message[] } = {};
  if (value.systemPrompt !== undefined) {
    if (typeof value.systemPrompt !== 'string') return 'systemPrompt must be a string';
    edit.systemPrompt = value.systemPrompt;
  }
  if (value.messages !== undefined) {
    if (!Array.isArray(value.messages)) return 'messages must be an array of messages';
    const index = value.messages.findIndex((message) => !isMessage(message));
    if (index >= 0) return `messages[${index}] is not a message the runtime knows`;
    edit.messages = structuredClone(value.messages as Message[]);
  }
  return edit;
}

function isBlock(value: unknown): value is ContentBlock {
  if (!isPlainObject(value)) return false;
  if (value.type === 'text' || value.type === 'reasoning') return typeof value.text === 'string';
  return value.type === 'image' && typeof value.data === 'string' && typeof value.mediaType === 'string';
}

function isMessage(value: unknown): value is Message {
  if (!isPlainObject(value)) return false;
  switch (value.type) {
    case 'user':
      return Array.isArray(value.content) && value.content.every(isBlock);
    case 'assistant':
      return (
        Array.isArray(value.content) &&
        value.content.every(isBlock) &&
        (value.status === 'complete' || value.status === 'incomplete')
      );
    case 'tool_call':
      return typeof value.callId === 'string' && typeof value.toolName === 'string';
    case 'tool_result':
      return (
        typeof value.callId === 'string' &&
        typeof value.content === 'string' &&
        typeof value.isError === 'boolean'
      );
    case 'system':
      return typeof value.content === 'string';
    default:
      return false;
  }
}

/**
 * The answer read to its end, then given to AfterModelCall, then handed on: as it came, with its text replaced
 * (one `text_delta` where the first one was), or — blocked — its usage only (those tokens were spent), then
 * MODEL_CALL_BLOCKED.
 */
async function* heldAnswer(options: {
  stream: AsyncIterable<ChatEvent>;
  request: ChatRequest;
  providerId: string;
  after: Runner;
  scope: HookScope;
}): AsyncGenerator<ChatEvent> {
  const { stream, request, providerId, after, scope } = options;
  const checker = new ChatEventChecker(providerId);
  const events: ChatEvent[] = [];
  for await (const raw of stream) events.push(checker.check(raw));
  const data: ModelCallAnswerData = {
    purpose: request.purpose,
    modelId: request.modelId,
    text: events.map((event) => (event.type === 'text_delta' ? event.text : '')).join(''),
    toolCalls: events.flatMap((event) =>
      event.type === 'tool_call'
        ? [{ callId: event.callId, toolName: event.toolName, arguments: event.arguments }]
        : [],
    ),
  };
  const given: ModelCallAnswerData = { ...data, toolCalls: structuredClone(data.toolCalls) };
  const outcome = await after(given);
  if (outcome?.abortReason !== undefined) {
    yield* events.filter((event) => event.type === 'usage');
    throw blocked('AfterModelCall', outcome.abortReason);
  }
  const replaced =
    outcome === undefined || outcome.data === given ? undefined : replacementText(outcome.data, scope);
  if (replaced === undefined) {
    yield* events;
    return;
  }
  let placed = false;
  for (const event of events) {
    const isText = event.type === 'text_delta';
    const atEnd = event.type === 'usage' || event.type === 'done';
    if (!placed && (isText || atEnd)) {
      placed = true;
      if (replaced !== '') yield { type: 'text_delta', text: replaced };
    }
    if (!isText) yield event;
  }
  if (!placed && replaced !== '') yield { type: 'text_delta', text: replaced };
}

/** The text a `continue_with` of AfterModelCall gives, or undefined (reported) when it gives none that is usable. */
function replacementText(value: unknown, scope: HookScope): string | undefined {
  if (!isPlainObject(value)) return undefined;
  if (typeof value.text === 'string') return value.text;
  scope.reportError(badEdit('AfterModelCall', 'its data must be an object { text: string }'));
  return undefined;
}

function blocked(event: 'BeforeModelCall' | 'AfterModelCall', reason: string): AgentError {
  const what = event === 'BeforeModelCall' ? 'the model call' : "the model's answer";
  return new AgentError({
    code: 'MODEL_CALL_BLOCKED',
    message: `a ${event} hook stopped ${what}: ${reason}`,
  });
}

function badEdit(event: string, problem: string): AgentError {
  return new AgentError({
    code: 'PLUGIN_ERROR',
    message: `a ${event} hook answered continue_with, which is ignored: ${problem}`,
  });
}
