import type { ToolHandler } from '@youyou/agent';
import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  readUIMessageStream,
  type UIMessage,
} from 'ai';
import { TOKENS } from './harness.js';

/** A user message as `useChat` builds it. */
export function userMessage(id: string, text: string): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** What the AI SDK's client made of one response: the final assistant message and the errors it reported. */
export interface Answer {
  message: UIMessage;
  errors: string[];
}

/**
 * Sends the chat's messages with `DefaultChatTransport` (what `useChat` uses by default) as tenant `as`, and
 * reads the response with `readUIMessageStream`, the AI SDK's own stream processing.
 */
export async function send(options: {
  url: string;
  chatId: string;
  messages: UIMessage[];
  as?: keyof typeof TOKENS;
}): Promise<Answer> {
  const url = options.url;
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${url}/ui/chat`,
    headers: { authorization: `Bearer ${TOKENS[options.as ?? 'alice']}` },
  });
  const stream = await transport.sendMessages({
    chatId: options.chatId,
    messages: options.messages,
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  const errors: string[] = [];
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({
    stream,
    onError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
  })) {
    last = message;
  }
  if (last === undefined) throw new Error('no assistant message arrived');
  return { message: last, errors };
}

/** The parts of a message without the step markers. */
export function contentParts(message: UIMessage): Record<string, unknown>[] {
  return message.parts.filter((part) => part.type !== 'step-start') as Record<string, unknown>[];
}

/** A read-only tool that records its calls in `ran`. */
export function lookupTool(ran: unknown[]): ToolHandler {
  return {
    name: 'lookup',
    description: 'looks a word up',
    parametersSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
    isMutating: false,
    execute: async (input) => {
      ran.push(input.arguments);
      return {
        content: `definition of ${String((input.arguments as { word: string }).word)}`,
        isError: false,
      };
    },
  };
}

/** The state `useChat` keeps in React, as a plain object: what `Chat` of `@ai-sdk/react` hands AbstractChat. */
export class PlainChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = this.messages.map((existing, at) => (at === index ? message : existing));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** A chat as `useChat` runs it (AbstractChat over DefaultChatTransport), on session `chatId` as alice at `url`. */
export class TestChat extends AbstractChat<UIMessage> {
  constructor(url: string, chatId: string) {
    super({
      id: chatId,
      state: new PlainChatState(),
      transport: new DefaultChatTransport<UIMessage>({
        api: `${url}/ui/chat`,
        headers: { authorization: `Bearer ${TOKENS.alice}` },
      }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
  }
}

/** Waits until `check` holds, polling; the chat's automatic request runs after the call that started it. */
export async function eventually(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in 5 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
