import type {
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolOutput } from '@youyou/agent';
import { authorizationProblemOf } from './auth.js';
import { type McpServerConfig, redact } from './config.js';
import { answerElicitation, type ElicitationHandler, type McpCallInFlight } from './elicitation.js';
import { describeFailure, isRequestTimeout, isSessionExpired } from './failure.js';
import { Link, LinkOpenError, type LinkOptions, type McpListKind } from './link.js';
import { toToolOutput } from './result.js';

/** A list answer (tools, resources, prompts) that keeps paging past this many pages is treated as broken. */
const MAX_LIST_PAGES = 1_000;

/** What `ServerClient` takes. */
export interface ServerClientOptions {
  config: McpServerConfig;
  timeoutMs: number;
  elicitation?: ElicitationHandler | undefined;
  onListChanged?: ((list: McpListKind) => void) | undefined;
}

/** What `ServerClient.callTool` takes. */
export interface CallToolRequest {
  /** The tool's MCP name, as the server listed it. */
  toolName: string;
  arguments: unknown;
  signal: AbortSignal;
  /** Hears the call's progress notifications, one line each (the tool's `onOutput`). */
  onOutput?: ((text: string) => void) | undefined;
  /** Who makes the call, for an elicitation the server sends while it runs. */
  call?: McpCallInFlight;
}

type Attempt = { output: ToolOutput } | { retry: true };

/**
 * The client side of one MCP server across reconnections. Calls never throw: every failure becomes an
 * `isError` output starting `MCP server "name" failed:`. A call that finds the last link lost opens a new
 * one first (calls arriving together share it); if that fails, the call fails and the next one tries again.
 */
export class ServerClient {
  readonly config: McpServerConfig;
  readonly #timeoutMs: number;
  readonly #linkOptions: LinkOptions;
  /** The tool calls under way, by call id: an elicitation names them to the host. */
  readonly #inFlight = new Map<string, { call: McpCallInFlight; ended: AbortController }>();
  #link: Link | undefined;
  #opening: Promise<Link> | undefined;
  #closed = false;

  constructor(options: ServerClientOptions) {
    this.config = options.config;
    this.#timeoutMs = options.timeoutMs;
    const handler = options.elicitation;
    this.#linkOptions = {
      transport: this.config.transport,
      timeoutMs: this.#timeoutMs,
      ...(handler === undefined
        ? {}
        : {
            elicit: (params, signal) => {
              const running = [...this.#inFlight.values()];
              return answerElicitation({
                handler,
                server: this.config.name,
                params,
                callsInFlight: running.map((entry) => entry.call),
                signal: untilAllEnded(signal, running),
              });
            },
          }),
      ...(options.onListChanged === undefined ? {} : { onListChanged: options.onListChanged }),
    };
  }

  /** Opens the first link; rejects with the SDK's error, which the caller words. */
  async connect(): Promise<void> {
    this.#link = await Link.open(this.#linkOptions);
  }

  /** What the server offers (`tools`, `resources`, `prompts`), as it said in `initialize`. */
  offers(kind: McpListKind): boolean {
    return this.#link?.client.getServerCapabilities()?.[kind] !== undefined;
  }

  /** Every tool the server lists, following `nextCursor`; none when the server has no tools capability. */
  listTools(signal?: AbortSignal): Promise<Tool[]> {
    return this.#listAll('tools', signal, async (link, params, options) => {
      const result = await link.client.listTools(params, options);
      return { items: result.tools, nextCursor: result.nextCursor };
    });
  }

  /** Every resource the server lists; none without the resources capability. */
  listResources(signal?: AbortSignal): Promise<Resource[]> {
    return this.#listAll('resources', signal, async (link, params, options) => {
      const result = await link.client.listResources(params, options);
      return { items: result.resources, nextCursor: result.nextCursor };
    });
  }

  /** Every resource template the server lists; none without the resources capability. */
  listResourceTemplates(signal?: AbortSignal): Promise<ResourceTemplate[]> {
    return this.#listAll('resources', signal, async (link, params, options) => {
      const result = await link.client.listResourceTemplates(params, options);
      return { items: result.resourceTemplates, nextCursor: result.nextCursor };
    });
  }

  /** Every prompt the server lists; none without the prompts capability. */
  listPrompts(signal?: AbortSignal): Promise<Prompt[]> {
    return this.#listAll('prompts', signal, async (link, params, options) => {
      const result = await link.client.listPrompts(params, options);
      return { items: result.prompts, nextCursor: result.nextCursor };
    });
  }

  /** Reads one resource; rejects with the server's error (callers word it). */
  readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    return this.#request(signal, (link, options) => link.client.readResource({ uri }, options));
  }

  /** Gets one prompt filled in with `args`; rejects with the server's error (callers word it). */
  getPrompt(name: string, args: Record<string, string>, signal?: AbortSignal): Promise<GetPromptResult> {
    return this.#request(signal, (link, options) =>
      link.client.getPrompt({ name, arguments: args }, options),
    );
  }

  /** Runs one request on a live link (reconnecting first when the last one was lost). */
  async #request<T>(
    signal: AbortSignal | undefined,
    work: (link: Link, options: { timeout: number; signal?: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    if (this.#closed) throw new Error('the connection was closed');
    const never = new AbortController().signal;
    const link = await this.#liveLink(signal ?? never);
    return work(link, { timeout: this.#timeoutMs, ...(signal === undefined ? {} : { signal }) });
  }

  async #listAll<T>(
    kind: McpListKind,
    signal: AbortSignal | undefined,
    fetchPage: (
      link: Link,
      params: { cursor?: string },
      options: { timeout: number; signal?: AbortSignal },
    ) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
  ): Promise<T[]> {
    return this.#request(signal, async (link, options) => {
      if (link.client.getServerCapabilities()?.[kind] === undefined) return [];
      const items: T[] = [];
      const seenCursors = new Set<string>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
        const result = await fetchPage(link, cursor === undefined ? {} : { cursor }, options);
        items.push(...result.items);
        cursor = result.nextCursor;
        if (cursor === undefined) return items;
        if (seenCursors.has(cursor))
          throw new Error(`${kind}/list returned the cursor ${JSON.stringify(cursor)} twice`);
        seenCursors.add(cursor);
      }
      throw new Error(`${kind}/list did not end within ${MAX_LIST_PAGES} pages`);
    });
  }

  /** Calls one tool; a 404 from an HTTP server that restarted is answered by a new session and one retry. */
  async callTool(request: CallToolRequest): Promise<ToolOutput> {
    if (
      typeof request.arguments !== 'object' ||
      request.arguments === null ||
      Array.isArray(request.arguments)
    ) {
      return this.#failed('the arguments must be a JSON object');
    }
    for (let attempt = 1; ; attempt += 1) {
      if (this.#closed) return this.#failed('the connection was closed');
      if (request.signal.aborted) return this.#failed('the call was cancelled');
      let link: Link;
      try {
        link = await this.#liveLink(request.signal);
      } catch (error) {
        if (request.signal.aborted) return this.#failed('the call was cancelled');
        const problem = authorizationProblemOf(this.config.transport, linkFailure(error));
        if (problem !== undefined) return this.#needsAuthorization(problem);
        return this.#failed(
          `it could not be reconnected (${describeOpenFailure(error)}); the next call tries again`,
        );
      }
      const result = await this.#attempt(link, request, attempt === 1);
      if ('output' in result) return result.output;
    }
  }

  /** Closes the current link (stopping a stdio server); later calls fail. Never rejects. */
  async close(): Promise<void> {
    this.#closed = true;
    const opening = this.#opening;
    await this.#link?.close();
    // A reconnection under way when we closed: wait for it, then close what it opened.
    if (opening !== undefined) await (await opening.catch(() => undefined))?.close();
  }

  async #attempt(link: Link, request: CallToolRequest, mayRetry: boolean): Promise<Attempt> {
    // The SDK leaves its abort listener on the signal it is given: give it one that dies with this call.
    const controller = new AbortController();
    const abort = (): void => controller.abort(request.signal.reason);
    // A lost link ends the call a moment later: when the loss came from this call's own request failing,
    // the SDK rejects it with that error first (a 404 must be seen as such to be retried).
    let lostTimer: NodeJS.Immediate | undefined;
    const abortWhenLost = (): void => {
      lostTimer = setImmediate(() => controller.abort(link.lostSignal.reason));
    };
    const { onOutput } = request;
    // With a progress token the server may report progress at all; each report is one line of live output.
    const progress =
      onOutput === undefined ? undefined : link.progressToken((params) => reportProgress(params, onOutput));
    request.signal.addEventListener('abort', abort);
    link.lostSignal.addEventListener('abort', abortWhenLost);
    if (request.call !== undefined)
      this.#inFlight.set(request.call.callId, { call: request.call, ended: new AbortController() });
    try {
      const result = await link.client.callTool(
        {
          name: request.toolName,
          arguments: request.arguments as Record<string, unknown>,
          ...(progress === undefined ? {} : { _meta: { progressToken: progress.token } }),
        },
        undefined,
        { signal: controller.signal, timeout: this.#timeoutMs },
      );
      return { output: toToolOutput(result) };
    } catch (error) {
      // The request never reached the server (it forgot our session), so sending it again is safe.
      if (isSessionExpired(error) && mayRetry && !request.signal.aborted) return { retry: true };
      if (request.signal.aborted) return { output: this.#failed('the call was cancelled') };
      if (this.#closed) return { output: this.#failed('the connection was closed') };
      const problem = authorizationProblemOf(this.config.transport, error);
      if (problem !== undefined) return { output: this.#needsAuthorization(problem) };
      if (!link.isLive) {
        return {
          output: this.#failed(
            `the connection was lost: ${link.lostReason()}. It is reconnected on the next call`,
          ),
        };
      }
      if (isRequestTimeout(error)) {
        return { output: this.#failed(`no answer within ${this.#timeoutMs}ms (the server's timeoutMs)`) };
      }
      return { output: this.#failed(describeFailure(error)) };
    } finally {
      progress?.release();
      if (request.call !== undefined) {
        this.#inFlight.get(request.call.callId)?.ended.abort('the tool call that asked has ended');
        this.#inFlight.delete(request.call.callId);
      }
      clearImmediate(lostTimer);
      request.signal.removeEventListener('abort', abort);
      link.lostSignal.removeEventListener('abort', abortWhenLost);
    }
  }

  /** The current link while it is live, else a new one (shared by the calls that wait for it). */
  async #liveLink(signal: AbortSignal): Promise<Link> {
    const current = this.#link;
    if (current?.isLive) return current;
    if (this.#opening === undefined) {
      const opening = Link.open(this.#linkOptions);
      this.#opening = opening;
      opening.then(
        (link) => {
          this.#opening = undefined;
          if (this.#closed) void link.close();
          else this.#link = link;
        },
        () => {
          this.#opening = undefined;
        },
      );
    }
    return untilAborted(this.#opening, signal);
  }

  /** The one line the model (and through it the user) reads when the server needs a login. */
  #needsAuthorization(problem: string): ToolOutput {
    return {
      content: redact(
        `MCP server "${this.config.name}" needs authorization: ${problem}`,
        this.config.transport,
      ),
      isError: true,
    };
  }

  #failed(detail: string): ToolOutput {
    return {
      content: redact(`MCP server "${this.config.name}" failed: ${detail}`, this.config.transport),
      isError: true,
    };
  }
}

/**
 * Reports one progress notification as a line of live output: its message, else `progress/total` (or the
 * progress alone); one with neither a message nor a numeric progress is dropped. The params come straight off
 * the wire, unchecked by the SDK; the server's text is passed on as it is: hosts neutralize what they show.
 */
function reportProgress(params: Record<string, unknown>, onOutput: (text: string) => void): void {
  const { message, progress, total } = params;
  if (typeof message === 'string' && message !== '') onOutput(`${message}\n`);
  else if (typeof progress === 'number') {
    onOutput(typeof total === 'number' ? `${progress}/${total}\n` : `${progress}\n`);
  }
}

/** An open failure with the end of the server's stderr, when there is any. */
export function describeOpenFailure(error: unknown): string {
  if (!(error instanceof LinkOpenError)) return describeFailure(error);
  const detail = isRequestTimeout(error.failure) ? 'no answer to initialize in time' : error.message;
  return error.stderrTail === '' ? detail : `${detail}; its stderr ended with: ${error.stderrTail}`;
}

/** The SDK's error behind a failed reconnection. */
function linkFailure(error: unknown): unknown {
  return error instanceof LinkOpenError ? error.failure : error;
}

/**
 * A question's signal: it aborts when the server withdraws the question, or when every call that was running
 * when it came has ended (the one that asked is among them: nobody waits for the answer any more).
 */
function untilAllEnded(signal: AbortSignal, running: readonly { ended: AbortController }[]): AbortSignal {
  if (running.length === 0) return signal;
  const allEnded = new AbortController();
  let left = running.length;
  for (const { ended } of running) {
    const onEnded = (): void => {
      left -= 1;
      if (left === 0) allEnded.abort(ended.signal.reason);
    };
    if (ended.signal.aborted) onEnded();
    else ended.signal.addEventListener('abort', onEnded, { once: true });
  }
  return AbortSignal.any([signal, allEnded.signal]);
}

/** `promise`, or a rejection as soon as `signal` aborts (the work behind `promise` goes on for others). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
