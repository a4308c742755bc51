/** The steps of the turn loop that are long enough to stand alone; `runTurn` calls them in order. */

import { type AgentError, toAgentError } from '../kernel/error.js';
import type { ContentBlock, TokenUsage } from '../kernel/types.js';
import { readChatStream } from '../model/model-call.js';
import { observedProvider } from '../model/observation.js';
import type { ChatRequest } from '../ports/model.js';
import { buildStablePrompt } from '../prompt/index.js';
import type { TurnStatus } from './running-turn.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import type { TurnOptions } from './turn-options.js';
import { usageSink } from './turn-usage.js';

/** What one streamed model answer produced. */
export interface ModelAnswer {
  content: ContentBlock[];
  toolCalls: { callId: string; toolName: string; arguments: string }[];
  /** The failure that ended the stream early, if any (not set for a cancellation). */
  error: AgentError | undefined;
  cancelled: boolean;
  /** True once any event arrived; a request is only retried before that. */
  receivedAny: boolean;
  /** The call's usage (its last `usage` event), when the provider reported it. */
  usage: TokenUsage | undefined;
}

/** Streams one model answer, emitting its deltas, and assembles the assistant content. Never rejects. */
export async function streamAnswer(options: TurnOptions, request: ChatRequest): Promise<ModelAnswer> {
  const { session, turnId, signal, emit } = options;
  const reasoning: ContentBlock[] = [];
  let reasoningText = '';
  let reasoningOpen = false;
  let text = '';
  const answer: ModelAnswer = {
    content: [],
    toolCalls: [],
    error: undefined,
    cancelled: false,
    receivedAny: false,
    usage: undefined,
  };
  const closeReasoning = (signature?: string): void => {
    if (!reasoningOpen) return;
    reasoning.push(
      signature === undefined
        ? { type: 'reasoning', text: reasoningText }
        : { type: 'reasoning', text: reasoningText, signature },
    );
    reasoningText = '';
    reasoningOpen = false;
  };
  try {
    await readChatStream({
      provider: observedProvider(options.observers, session.model.provider, {
        sessionId: session.id,
        turnId,
      }),
      request,
      signal,
      onEvent: (event) => {
        // Yield point: between stream events.
        if (signal.aborted) {
          answer.cancelled = true;
          return false;
        }
        answer.receivedAny = true;
        switch (event.type) {
          case 'text_delta':
            text += event.text;
            emit({ type: 'text_delta', text: event.text });
            break;
          case 'reasoning_delta':
            reasoningText += event.text;
            reasoningOpen = true;
            emit({ type: 'reasoning_delta', text: event.text });
            break;
          case 'reasoning_signature':
            reasoningOpen = true;
            closeReasoning(event.signature);
            break;
          case 'tool_call':
            answer.toolCalls.push({
              callId: event.callId,
              toolName: event.toolName,
              arguments: event.arguments,
            });
            break;
          case 'usage':
            // inputTokens is the whole prompt, cached parts included.
            session.context.recordReportedInput(event.usage.inputTokens);
            answer.usage = event.usage;
            break;
          case 'done':
            break;
        }
        return true;
      },
    });
  } catch (error) {
    if (!signal.aborted) answer.error = toAgentError(error, 'PROVIDER_ERROR');
  }
  if (signal.aborted) answer.cancelled = true;
  if (answer.usage !== undefined) {
    usageSink(options)({
      purpose: request.purpose,
      providerId: session.model.provider.id,
      modelId: request.modelId,
      usage: answer.usage,
    });
  }
  closeReasoning();
  // Reasoning blocks come before the text, so providers can send them back (SPEC §3).
  answer.content = text === '' ? reasoning : [...reasoning, { type: 'text', text }];
  // Tool calls of an interrupted answer are neither run nor kept: the model did not finish its reply.
  if (answer.cancelled || answer.error !== undefined) answer.toolCalls = [];
  return answer;
}

/**
 * Extracts memories when the checkpoint interval is reached, then reloads the memories the prompt shows.
 * The messages are given up only once an extraction succeeded, so a failed or cancelled one leaves them
 * for the next extraction (at the next checkpoint or at close).
 */
export async function memoryCheckpoint(options: TurnOptions): Promise<'done' | 'cancelled'> {
  const { runtime, session, turnId, signal, emit } = options;
  const memory = runtime.memory;
  const interval = runtime.config.memoryCheckpointInterval;
  if (memory === undefined || !session.checkpointDue(interval)) return 'done';
  if (signal.aborted) return 'cancelled';
  const messages = session.takeSinceCheckpoint();
  const memoryModel = runtime.config.memoryModel;
  const route = memoryModel === undefined ? session.model : runtime.models.resolve(memoryModel);
  try {
    await memory.extract({
      messages,
      provider: observedProvider(options.observers, route.provider, { sessionId: session.id, turnId }),
      modelId: route.info.id,
      sessionId: session.id,
      signal,
      onUsage: usageSink(options),
    });
  } catch (error) {
    session.returnSinceCheckpoint(messages);
    if (signal.aborted) return 'cancelled';
    emit({ type: 'error', error: toAgentError(error, 'MEMORY_ERROR', 'memory checkpoint failed') });
    return 'done';
  }
  try {
    session.memories = await memory.load();
  } catch (error) {
    emit({ type: 'error', error: toAgentError(error, 'STORAGE_ERROR', 'reloading memories failed') });
  }
  return 'done';
}

/** Runs TurnEnd; its failures are reported, never thrown. */
export async function turnEnd(
  options: TurnOptions,
  status: TurnStatus,
  toolCallCount: number,
): Promise<void> {
  const { runtime, session, turnId, emit } = options;
  if (!runtime.hooks.has('TurnEnd')) return;
  try {
    const outcome = await runtime.hooks.dispatch({
      event: 'TurnEnd',
      sessionId: session.id,
      turnId,
      data: { status, toolCallCount },
      timeoutMs: runtime.config.toolTimeoutMs,
    });
    for (const error of outcome.errors) emit({ type: 'error', error });
  } catch (error) {
    emit({ type: 'error', error: toAgentError(error, 'PLUGIN_ERROR', 'TurnEnd failed') });
  }
}

/** The stable part of the system prompt, built once and cached until the next compaction. */
export function cachedStablePrompt(runtime: AgentRuntime, session: SessionState): string {
  const cached = session.context.stablePrompt;
  if (cached !== undefined) return cached;
  const built = buildStablePrompt({
    systemInstructions: runtime.config.systemInstructions,
    systemPromptOverride: session.systemPromptOverride,
    personality: runtime.config.personality,
    implicitSkills: runtime.skills.implicitSkills(),
    plugins: runtime.plugins,
  });
  session.context.stablePrompt = built;
  return built;
}

/** The text of the user's input, for skills and the TurnStart hook. */
export function textOf(content: readonly ContentBlock[]): string {
  let text = '';
  for (const block of content) {
    if (block.type === 'text') text = text === '' ? block.text : `${text}\n${block.text}`;
  }
  return text;
}

export function readDynamicSections(data: unknown): readonly string[] {
  if (typeof data !== 'object' || data === null) return [];
  const sections = (data as { dynamicSections?: unknown }).dynamicSections;
  if (!Array.isArray(sections)) return [];
  return sections.filter((section): section is string => typeof section === 'string' && section !== '');
}
