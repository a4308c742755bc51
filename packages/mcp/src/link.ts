import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpTransportConfig } from './config.js';
import { describeFailure } from './failure.js';
import { createTransport, type WatchedTransport } from './transport.js';

/** Who we say we are in `initialize`. */
const CLIENT_INFO = { name: 'youyou-agent', version: '0.1.0' };

/** The longest `close()` waits for an HTTP server to confirm the end of the session. */
const SESSION_END_WAIT_MS = 2_000;

/** Our progress tokens start with this: progress for one of them is ours, even after its call ended. */
const PROGRESS_TOKEN_PREFIX = 'youyou-progress-';

/** What `Link.open` takes. */
export interface LinkOptions {
  transport: McpTransportConfig;
  timeoutMs: number;
  /** Answers the server's `elicitation/create`; given, the client offers the elicitation capability (forms). */
  elicit?: (params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;
  /** Hears the server's `notifications/{tools,resources,prompts}/list_changed`. */
  onListChanged?: (list: McpListKind) => void;
}

/** The lists a server may say have changed. */
export type McpListKind = 'tools' | 'resources' | 'prompts';

/**
 * One live connection to a server: one transport and one initialised client. A Link is never reused once
 * lost: the server connection makes a new one instead. `lostSignal` aborts, with a reason the model can
 * read, when the server goes away (process exit, broken response stream, failed send) or the link is closed.
 */
export class Link {
  readonly client: Client;
  readonly #watched: WatchedTransport;
  readonly #lost = new AbortController();
  /** The progress listeners of the calls running now, by their progress token. */
  readonly #progress = new Map<string, (params: Record<string, unknown>) => void>();
  #nextProgressToken = 0;
  #closing = false;

  private constructor(options: LinkOptions) {
    this.#watched = createTransport({
      config: options.transport,
      onSendFailed: (error) => this.#markLost(`a request could not be sent (${describeFailure(error)})`),
      onStreamBroken: (error) => this.#markLost(`the server stopped answering (${describeFailure(error)})`),
    });
    const { elicit, onListChanged } = options;
    this.client = new Client(
      CLIENT_INFO,
      elicit === undefined ? undefined : { capabilities: { elicitation: { form: {} } } },
    );
    if (elicit !== undefined) {
      this.client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
        elicit(request.params, extra.signal),
      );
    }
    if (onListChanged !== undefined) {
      this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => onListChanged('tools'));
      this.client.setNotificationHandler(ResourceListChangedNotificationSchema, () =>
        onListChanged('resources'),
      );
      this.client.setNotificationHandler(PromptListChangedNotificationSchema, () => onListChanged('prompts'));
    }
    // The SDK closes the client when the transport closes: for stdio that is the server process exiting.
    this.client.onclose = () => this.#markLost('the server process exited');
  }

  /**
   * Starts the transport and initialises. On failure everything started is stopped again and it rejects
   * with a LinkOpenError, which keeps the end of a stdio server's stderr (the usual explanation).
   */
  static async open(options: LinkOptions): Promise<Link> {
    const link = new Link(options);
    try {
      await link.client.connect(link.#watched.transport, { timeout: options.timeoutMs });
    } catch (error) {
      await link.close();
      throw new LinkOpenError({ failure: error, stderrTail: link.stderrTail() });
    }
    link.#routeProgress();
    return link;
  }

  /**
   * A progress token for one call, whose `notifications/progress` go to `listener` until `release()`. The SDK's
   * own `onprogress` hands notifications over a microtask later while it handles a response at once, so the
   * progress a server sends just before its answer would be lost (typescript-sdk issue 2580): ours are taken
   * off the transport in arrival order instead.
   */
  progressToken(listener: (params: Record<string, unknown>) => void): { token: string; release: () => void } {
    this.#nextProgressToken += 1;
    const token = `${PROGRESS_TOKEN_PREFIX}${this.#nextProgressToken}`;
    this.#progress.set(token, listener);
    return { token, release: () => this.#progress.delete(token) };
  }

  /** Takes progress for our tokens off the transport before the SDK sees it (see `progressToken`). */
  #routeProgress(): void {
    const { transport } = this.#watched;
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const params = progressParams(message);
      const token = params?.progressToken;
      if (params === undefined || typeof token !== 'string' || !token.startsWith(PROGRESS_TOKEN_PREFIX)) {
        deliver?.(message, extra);
        return;
      }
      // A late one (its call has ended) is dropped quietly; the SDK would call it an unknown token.
      try {
        this.#progress.get(token)?.(params);
      } catch {
        // A listener's failure must not break the transport's reading of the messages after this one.
      }
    };
  }

  /** Aborts when the link can no longer carry requests. */
  get lostSignal(): AbortSignal {
    return this.#lost.signal;
  }

  /** True while requests may be sent. */
  get isLive(): boolean {
    return !this.#lost.signal.aborted;
  }

  /** Why the link was lost (with the end of a stdio server's stderr), or '' while it is live. */
  lostReason(): string {
    if (this.isLive) return '';
    const reason = String(this.#lost.signal.reason);
    const stderr = this.stderrTail();
    return stderr === '' ? reason : `${reason}; its stderr ended with: ${stderr}`;
  }

  /** The end of a stdio server's stderr, for error messages. */
  stderrTail(): string {
    return this.#watched.stderrTail();
  }

  /**
   * Ends the session (HTTP: a DELETE, waited for at most two seconds) and closes the transport, which
   * stops a stdio server (stdin closed, then SIGTERM and SIGKILL if it lingers). Never rejects.
   */
  async close(): Promise<void> {
    if (this.#closing) return;
    const wasLive = this.isLive;
    this.#closing = true;
    if (wasLive) this.#lost.abort('the connection was closed');
    const { transport } = this.#watched;
    if (wasLive && transport instanceof StreamableHTTPClientTransport) {
      await settleWithin(transport.terminateSession(), SESSION_END_WAIT_MS);
    }
    await this.client.close().catch(() => undefined);
  }

  #markLost(reason: string): void {
    // Closing aborts the link's own streams and fires onclose: those are not news.
    if (this.#closing || !this.isLive) return;
    this.#lost.abort(reason);
    // Free the transport (a later call opens a new link), but only once the failing request has been
    // rejected with its own error: closing now would reject it first with a bare "Connection closed".
    setImmediate(() => void this.close());
  }
}

/** Why `Link.open` failed: the SDK's error as `failure` (and `cause`), with the server's last stderr output. */
export class LinkOpenError extends Error {
  readonly failure: unknown;
  readonly stderrTail: string;

  constructor(options: { failure: unknown; stderrTail: string }) {
    super(describeFailure(options.failure), { cause: options.failure });
    this.failure = options.failure;
    this.stderrTail = options.stderrTail;
  }
}

/** The params of a `notifications/progress` message, or undefined for any other message. */
function progressParams(message: unknown): Record<string, unknown> | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== 'notifications/progress' || typeof params !== 'object' || params === null) return undefined;
  return params as Record<string, unknown>;
}

/** Waits for `promise` at most `ms`; its rejection is ignored (best-effort clean-up). */
async function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([promise.catch(() => undefined), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
