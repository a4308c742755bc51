/** The steps of the turn loop that are long enough to stand alone; `runTurn` calls them in order. */

import { summariseHistory } from './compaction.js';
import { type AgentError, isAgentError, toAgentError } from './error.js';
import { readChatStream } from './model-call.js';
import type { ChatRequest } from './ports/model.js';
import { buildStablePrompt } from './prompt/index.js';
import type { TurnStatus } from './running-turn.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import type { TurnOptions } from './turn-options.js';
import type { ContentBlock } from './types.js';

/** What one streamed model answer produced. */
export interface ModelAnswer {
  content: ContentBlock[];
  toolCalls: { callId: string; toolName: string; arguments: string }[];
  /** The failure that ended the stream early, if any (not set for a cancellation). */
  error: AgentError | undefined;
  cancelled: boolean;
  /** True once any event arrived; a request is only retried before that. */
  receivedAny: boolean;
}

/** Streams one model answer, emitting its deltas, and assembles the assistant content. Never rejects. */
export async function streamAnswer(options: TurnOptions, request: ChatRequest): Promise<ModelAnswer> {
  const { session, signal, emit } = options;
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
      provider: session.model.provider,
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
            session.context.recordReportedInput(
              event.usage.inputTokens + (event.usage.cachedInputTokens ?? 0),
            );
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
  closeReasoning();
  // Reasoning blocks come before the text, so providers can send them back (SPEC §3).
  answer.content = text === '' ? reasoning : [...reasoning, { type: 'text', text }];
  // Tool calls of an interrupted answer are neither run nor kept: the model did not finish its reply.
  if (answer.cancelled || answer.error !== undefined) answer.toolCalls = [];
  return answer;
}

/** Runs BeforeCompact and the compaction; reports COMPACT_ERROR and goes on with the full history. */
export async function compact(
  options: TurnOptions,
  estimatedTokens: number,
): Promise<'compacted' | 'skipped' | 'cancelled'> {
  const { runtime, session, turnId, signal, emit } = options;
  const context = session.context;
  if (signal.aborted) return 'cancelled';
  if (runtime.hooks.has('BeforeCompact')) {
    const outcome = await runtime.hooks.dispatch({
      event: 'BeforeCompact',
      sessionId: session.id,
      turnId,
      data: {
        messageCount: context.messages.length,
        estimatedTokens,
        contextWindow: session.model.info.contextWindow,
      },
      timeoutMs: runtime.config.toolTimeoutMs,
    });
    for (const error of outcome.errors) emit({ type: 'error', error });
    if (outcome.abortReason !== undefined) return 'skipped';
  }
  // Yield point: before the compaction request.
  if (signal.aborted) return 'cancelled';
  const compactModel = runtime.config.compactModel;
  const route = compactModel === undefined ? session.model : runtime.models.resolve(compactModel);
  try {
    const result = await summariseHistory({
      context,
      contextWindow: session.model.info.contextWindow,
      provider: route.provider,
      model: route.info,
      prompt: runtime.config.compactPrompt,
      signal,
    });
    context.applyCompaction(result);
    await session.log.append({
      type: 'metadata',
      key: 'compaction',
      value: { summary: result.summary, keptMessages: result.keptCount },
    });
    emit({ type: 'context_compacted' });
    return 'compacted';
  } catch (error) {
    if (signal.aborted) return 'cancelled';
    if (isAgentError(error) && error.code === 'STORAGE_ERROR') throw error;
    emit({ type: 'error', error: toAgentError(error, 'COMPACT_ERROR') });
    return 'skipped';
  }
}

/**
 * Extracts memories when the checkpoint interval is reached, then reloads the memories the prompt shows.
 * The messages are given up only once an extraction succeeded, so a failed or cancelled one leaves them
 * for the next extraction (at the next checkpoint or at close).
 */
export async function memoryCheckpoint(options: TurnOptions): Promise<'done' | 'cancelled'> {
  const { runtime, session, signal, emit } = options;
  const memory = runtime.memory;
  const interval = runtime.config.memoryCheckpointInterval;
  if (memory === undefined || interval === 0 || session.turnsSinceCheckpoint < interval) return 'done';
  if (signal.aborted) return 'cancelled';
  const messages = session.sinceCheckpoint;
  session.sinceCheckpoint = [];
  session.turnsSinceCheckpoint = 0;
  const memoryModel = runtime.config.memoryModel;
  const route = memoryModel === undefined ? session.model : runtime.models.resolve(memoryModel);
  try {
    await memory.extract({
      messages,
      provider: route.provider,
      modelId: route.info.id,
      sessionId: session.id,
      signal,
    });
  } catch (error) {
    session.sinceCheckpoint = [...messages, ...session.sinceCheckpoint];
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
