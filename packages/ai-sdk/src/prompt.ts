/** Maps a YouYou ChatRequest to the prompt and tools of the AI SDK language model specification (V3). */
import type {
  LanguageModelV3FilePart,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ReasoningPart,
  LanguageModelV3TextPart,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import type { ChatRequest, ContentBlock, Message, ToolSpec } from '@youyou/agent';

/**
 * How history `system` messages are sent; some wrapped providers (Anthropic, Google) accept system messages
 * only at the start. `leading`: those before the first user or assistant message stay system messages, later
 * ones are sent as user messages; `in-place`: all as system messages where they stand; `as-user`: all as user.
 */
export type SystemMessageMode = 'leading' | 'in-place' | 'as-user';

/** What `toPrompt` takes. */
export interface PromptOptions {
  request: ChatRequest;
  systemMessages: SystemMessageMode;
  /** The providerOptions key the wrapped provider reads a reasoning signature from (e.g. `anthropic`). */
  reasoningNamespace: string | undefined;
}

/** The text of the synthetic result a tool call without a recorded result gets. */
export const MISSING_RESULT_TEXT = 'No result was recorded for this tool call.';

/** The prefix of a history system message sent as a user message (`systemMessages: 'as-user'`). */
export const SYSTEM_AS_USER_PREFIX = '[System message]\n';

type AssistantMessage = Extract<LanguageModelV3Message, { role: 'assistant' }>;
type UserPart = LanguageModelV3TextPart | LanguageModelV3FilePart;

/** The tool calls of one assistant reply, whose results are gathered until the next non-result message. */
interface OpenToolBlock {
  assistant: AssistantMessage;
  calls: { callId: string; toolName: string }[];
  results: Map<string, LanguageModelV3ToolResultPart>;
  /** Results whose call is not in this reply: sent as user notes after the tool message. */
  notes: string[];
}

/** The function tools of a request, as the AI SDK expects them. */
export function toTools(tools: readonly ToolSpec[]): LanguageModelV3FunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters,
  }));
}

/**
 * The whole prompt: the system prompt first, then the history. Consecutive `tool_call` messages join the
 * preceding assistant message; their results follow in one `tool` message, in call order. A result whose
 * call is missing becomes a user note; a call without a result gets a synthetic error result, because
 * every vendor rejects an unanswered tool call.
 */
export function toPrompt(options: PromptOptions): LanguageModelV3Prompt {
  const builder = new PromptBuilder(options);
  if (options.request.systemPrompt !== '')
    builder.push({ role: 'system', content: options.request.systemPrompt });
  for (const message of options.request.messages) builder.add(message);
  return builder.finish();
}

class PromptBuilder {
  private readonly prompt: LanguageModelV3Prompt = [];
  /** The last message pushed, while it is an assistant message that tool calls may still join. */
  private openAssistant: AssistantMessage | undefined;
  private block: OpenToolBlock | undefined;
  /** The type of the history message added last. */
  private previous: Message['type'] | undefined;

  constructor(private readonly options: PromptOptions) {}

  private sendsSystemInPlace(): boolean {
    const mode = this.options.systemMessages;
    if (mode !== 'leading') return mode === 'in-place';
    return this.prompt.every((message) => message.role === 'system');
  }

  push(message: LanguageModelV3Message): void {
    this.prompt.push(message);
    this.openAssistant = undefined;
  }

  add(message: Message): void {
    const previous = this.previous;
    this.previous = message.type;
    switch (message.type) {
      case 'system':
        this.closeBlock();
        this.push(
          this.sendsSystemInPlace()
            ? { role: 'system', content: message.content }
            : userText(`${SYSTEM_AS_USER_PREFIX}${message.content}`),
        );
        return;
      case 'user': {
        this.closeBlock();
        const content = message.content.flatMap(toUserPart);
        if (content.length > 0) this.push({ role: 'user', content });
        return;
      }
      case 'assistant': {
        this.closeBlock();
        const content = message.content.flatMap((block) => this.toAssistantPart(block));
        if (content.length === 0) return;
        const assistant: AssistantMessage = { role: 'assistant', content };
        this.push(assistant);
        this.openAssistant = assistant;
        return;
      }
      case 'tool_call':
        // A call after a result is the next reply of a tool loop: joining it to the reply before would also
        // rewrite the previous request's messages, and a provider's prefix cache with them.
        if (previous === 'tool_result') this.closeBlock();
        this.addToolCall(message);
        return;
      case 'tool_result':
        this.addToolResult(message);
        return;
    }
  }

  finish(): LanguageModelV3Prompt {
    this.closeBlock();
    return this.prompt;
  }

  private addToolCall(call: Extract<Message, { type: 'tool_call' }>): void {
    if (this.block === undefined) {
      let assistant = this.openAssistant;
      if (assistant === undefined) {
        // A reply with tool calls and no content has no assistant message of its own (SPEC §5.12).
        assistant = { role: 'assistant', content: [] };
        this.push(assistant);
      }
      this.block = { assistant, calls: [], results: new Map(), notes: [] };
    }
    this.block.assistant.content.push({
      type: 'tool-call',
      toolCallId: call.callId,
      toolName: call.toolName,
      input: call.arguments ?? {},
    });
    this.block.calls.push({ callId: call.callId, toolName: call.toolName });
  }

  private addToolResult(result: Extract<Message, { type: 'tool_result' }>): void {
    const block = this.block;
    const call = block?.calls.find((candidate) => candidate.callId === result.callId);
    if (block !== undefined && call !== undefined && !block.results.has(result.callId)) {
      block.results.set(result.callId, {
        type: 'tool-result',
        toolCallId: result.callId,
        toolName: call.toolName,
        output: { type: result.isError ? 'error-text' : 'text', value: result.content },
      });
      return;
    }
    const note = `Result of tool call ${result.callId}, whose call is not in this conversation${
      result.isError ? ' (it failed)' : ''
    }:\n${result.content}`;
    // A user message may not come between tool calls and their results; the note waits for the block to close.
    if (block !== undefined) block.notes.push(note);
    else this.push(userText(note));
  }

  private closeBlock(): void {
    const block = this.block;
    if (block === undefined) return;
    this.block = undefined;
    this.push({
      role: 'tool',
      content: block.calls.map(
        (call) =>
          block.results.get(call.callId) ?? {
            type: 'tool-result',
            toolCallId: call.callId,
            toolName: call.toolName,
            output: { type: 'error-text', value: MISSING_RESULT_TEXT },
          },
      ),
    });
    for (const note of block.notes) this.push(userText(note));
  }

  private toAssistantPart(block: ContentBlock): (UserPart | LanguageModelV3ReasoningPart)[] {
    if (block.type !== 'reasoning') return toUserPart(block);
    if (block.signature === undefined) return [{ type: 'reasoning', text: block.text }];
    // `youyou` keeps the signature under our own key; the wrapped provider's key lets it replay the block.
    const namespace = this.options.reasoningNamespace;
    const signature = { signature: block.signature };
    const providerOptions =
      namespace === undefined || namespace === 'youyou'
        ? { youyou: signature }
        : { youyou: signature, [namespace]: signature };
    return [{ type: 'reasoning', text: block.text, providerOptions }];
  }
}

/** A user-side part; reasoning never belongs to a user message and empty text says nothing. */
function toUserPart(block: ContentBlock): UserPart[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ type: 'text', text: block.text }];
    case 'image':
      return [{ type: 'file', mediaType: block.mediaType, data: block.data }];
    case 'reasoning':
      return [];
  }
}

function userText(text: string): LanguageModelV3Message {
  return { role: 'user', content: [{ type: 'text', text }] };
}
