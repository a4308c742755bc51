/**
 * A scripted OpenAI-compatible model server for tests that run the `youyou` binary: the turn requests get
 * the replies queued with `reply`, in order; the memory extraction and consolidation requests the CLI makes
 * when a session closes are answered by themselves with an empty memory list. Replies carry no usage chunk
 * (so the screen shows no usage line) unless made with `usageReply`.
 */
import {
  chatFinish,
  chatReasoningChunks,
  chatTextChunks,
  chatToolCallChunks,
  sseReply,
  type WireUsage,
} from './openai-wire.js';
import { startWireServer, type WireReply, type WireRequest, type WireServer } from './wire-server.js';

/** A reply, or a function of the request that builds one (to check what the model was sent, or to hold it). */
export type ChatScript = WireReply | ((request: WireRequest) => WireReply | Promise<WireReply>);

/** One Chat Completions message of a request body. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

/** The wire server and what the tests need of it. */
export interface ChatServer {
  /** The OpenAI-style root to pass as --base-url: `http://127.0.0.1:PORT/v1`. */
  readonly baseURL: string;
  readonly wire: WireServer;
  /** Queues replies for the next turn requests. */
  reply(...scripts: ChatScript[]): void;
  /** The turn requests received so far (memory requests left out). */
  turnRequests(): WireRequest[];
  /** The memory extraction requests received so far. */
  memoryRequests(): WireRequest[];
  close(): Promise<void>;
}

/** How many requests one server can answer; each takes one entry of the wire server's queue. */
const CAPACITY = 500;

/** The messages of a Chat Completions request body. */
export function messagesOf(request: WireRequest): ChatMessage[] {
  const body = request.body as { messages?: ChatMessage[] } | undefined;
  return body?.messages ?? [];
}

/** The text of a message's content, whether a string or content parts. */
export function contentText(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content)) {
    return message.content
      .map((part: { text?: unknown }) => (typeof part.text === 'string' ? part.text : ''))
      .join('');
  }
  return '';
}

/** True for the runtime's own memory requests (their system prompt is the extraction or consolidation prompt). */
export function isMemoryRequest(request: WireRequest): boolean {
  const system = messagesOf(request).find(
    (message) => message.role === 'system' || message.role === 'developer',
  );
  const text = system === undefined ? '' : contentText(system);
  return (
    text.startsWith('You extract long-term memories') ||
    text.startsWith('You maintain a store of long-term memories')
  );
}

/** A complete streamed text answer. */
export function textReply(...parts: string[]): WireReply {
  return sseReply([...chatTextChunks(parts), ...chatFinish({ usage: null })]);
}

/** A complete streamed text answer whose last chunk reports this usage. */
export function usageReply(usage: WireUsage, ...parts: string[]): WireReply {
  return sseReply([...chatTextChunks(parts), ...chatFinish({ usage })]);
}

/** A streamed answer with reasoning first, then text. */
export function reasoningReply(reasoning: string[], text: string[]): WireReply {
  return sseReply([
    ...chatReasoningChunks(reasoning),
    ...chatTextChunks(text),
    ...chatFinish({ usage: null }),
  ]);
}

/** An answer that calls one tool with these arguments. */
export function toolCallReply(options: { id: string; name: string; arguments: unknown }): WireReply {
  const text = JSON.stringify(options.arguments);
  const middle = Math.floor(text.length / 2);
  return sseReply([
    ...chatToolCallChunks([
      { id: options.id, name: options.name, fragments: [text.slice(0, middle), text.slice(middle)] },
    ]),
    ...chatFinish({ finishReason: 'tool_calls', usage: null }),
  ]);
}

/** Text that starts streaming and never finishes, until the client goes away. */
export function hangingReply(...parts: string[]): WireReply {
  return sseReply(chatTextChunks(parts), { hang: true });
}

/** The result of tool call `callId` in a request, or undefined. */
export function toolResult(request: WireRequest, callId: string): string | undefined {
  const message = messagesOf(request).find((entry) => entry.role === 'tool' && entry.tool_call_id === callId);
  return message === undefined ? undefined : contentText(message);
}

/**
 * Starts a server; replies queued with `reply` answer the turn requests in order, and `memoryReply` (default:
 * no memories) the memory requests.
 */
export async function startChatServer(
  options: { memoryReply?: (request: WireRequest) => WireReply } = {},
): Promise<ChatServer> {
  const wire = await startWireServer();
  const queue: ChatScript[] = [];
  const dispatch = (request: WireRequest): WireReply | Promise<WireReply> => {
    if (isMemoryRequest(request)) return options.memoryReply?.(request) ?? textReply('{"memories": []}');
    const script = queue.shift();
    if (script === undefined) {
      return { type: 'json', status: 400, body: { error: { message: 'cli-wire: no turn reply scripted' } } };
    }
    return typeof script === 'function' ? script(request) : script;
  };
  wire.enqueue(...Array.from({ length: CAPACITY }, () => dispatch));
  return {
    baseURL: `${wire.url}/v1`,
    wire,
    reply: (...scripts) => {
      queue.push(...scripts);
    },
    turnRequests: () => wire.requests.filter((request) => !isMemoryRequest(request)),
    memoryRequests: () => wire.requests.filter(isMemoryRequest),
    close: () => wire.close(),
  };
}
