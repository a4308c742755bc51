import type Anthropic from '@anthropic-ai/sdk';
import { AgentError, type ChatRequest } from '@youyou/agent';
import { messagesWithBreakpoints } from './cache.js';
import type { ResolvedModel } from './models.js';
import { applyOutputRoute, type OutputRoute } from './output-format.js';

/** The `thinking` option of the provider: turns extended thinking on for every request. */
export interface ThinkingOption {
  /**
   * Tokens the model may spend thinking (at least 1024). On budget models it is sent as
   * `budget_tokens`; on adaptive models (which pick their own depth) it is only added to `max_tokens`,
   * so that the thinking does not eat the answer's room.
   */
  budgetTokens: number;
}

/** The smallest thinking budget the API accepts. */
export const MIN_THINKING_BUDGET = 1024;

/** True when the model will think on this request, so its thinking blocks must be sent back. */
export function thinkingActive(model: ResolvedModel, thinking: ThinkingOption | undefined): boolean {
  return thinking !== undefined || model.thinksByDefault;
}

/**
 * The `system` parameter: the system prompt as one text block marked for caching (the runtime sends the stable
 * part alone there and the dynamic part in the messages); undefined when there is none. A caller that still
 * puts a dynamic part after the stable one in `systemPrompt` gets the stable part marked and the rest after it.
 */
function systemBlocks(request: ChatRequest): Anthropic.TextBlockParam[] | undefined {
  const { stable } = request.systemPromptParts;
  const text = request.systemPrompt === '' ? stable : request.systemPrompt;
  if (text.trim() === '') return undefined;
  if (stable.trim() !== '' && text.length > stable.length && text.startsWith(stable)) {
    const rest = text.slice(stable.length).replace(/^\n\n/, '');
    const blocks: Anthropic.TextBlockParam[] = [
      { type: 'text', text: stable, cache_control: { type: 'ephemeral' } },
    ];
    if (rest.trim() !== '') blocks.push({ type: 'text', text: rest });
    return blocks;
  }
  return [{ type: 'text', text, cache_control: { type: 'ephemeral' } }];
}

function maxTokensFor(options: {
  request: ChatRequest;
  model: ResolvedModel;
  thinking: ThinkingOption | undefined;
}): number {
  const { request, model, thinking } = options;
  const answer = request.maxOutputTokens ?? model.defaultMaxTokens;
  const wanted = thinking === undefined ? answer : answer + thinking.budgetTokens;
  const maxTokens = Math.min(wanted, model.maxOutputTokens ?? Number.POSITIVE_INFINITY);
  if (thinking !== undefined && model.thinking === 'budget' && maxTokens <= thinking.budgetTokens) {
    throw new AgentError({
      code: 'PROVIDER_ERROR',
      message: `the thinking budget (${thinking.budgetTokens} tokens) must be below max_tokens, and model '${model.id}' allows at most ${maxTokens}; lower thinking.budgetTokens`,
    });
  }
  return maxTokens;
}

function thinkingParam(model: ResolvedModel, thinking: ThinkingOption): Anthropic.ThinkingConfigParam {
  return model.thinking === 'adaptive'
    ? { type: 'adaptive' }
    : { type: 'enabled', budget_tokens: thinking.budgetTokens };
}

/**
 * The streaming Messages request for one ChatRequest. `request.temperature` is not sent: API version
 * 2026-10-21, which `@anthropic-ai/sdk` 1.x speaks, removed the sampling parameters and answers 400 to any.
 */
export function buildParams(options: {
  request: ChatRequest;
  model: ResolvedModel;
  thinking: ThinkingOption | undefined;
  /** How `request.responseFormat` is sent (see outputRoute). */
  outputRoute?: OutputRoute | undefined;
}): Anthropic.MessageCreateParamsStreaming {
  const { request, model, thinking } = options;
  const system = systemBlocks(request);
  const params: Anthropic.MessageCreateParamsStreaming = {
    model: model.id,
    max_tokens: maxTokensFor(options),
    messages: messagesWithBreakpoints({
      request,
      history: { replayThinking: thinkingActive(model, thinking) },
      systemBreakpoints: system === undefined ? 0 : 1,
    }),
    stream: true,
  };
  if (system !== undefined) params.system = system;
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters as Anthropic.Tool.InputSchema,
    }));
  }
  if (thinking !== undefined) params.thinking = thinkingParam(model, thinking);
  if (options.outputRoute !== undefined) {
    applyOutputRoute({
      params,
      request,
      route: options.outputRoute,
      thinking: thinkingActive(model, thinking),
    });
  }
  return params;
}
