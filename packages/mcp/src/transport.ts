import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { shareRefreshes, watchAuthProvider } from './auth.js';
import type { McpHttpTransportConfig, McpStdioTransportConfig, McpTransportConfig } from './config.js';

/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 1_000;

/** A transport ready for `Client.connect`, with what it can tell about a failure. */
export interface WatchedTransport {
  transport: Transport;
  /** The end of the server's stderr (stdio only), trimmed; '' when there is none. */
  stderrTail(): string;
}

/** What `createTransport` takes. */
export interface CreateTransportOptions {
  config: McpTransportConfig;
  /** A message could not be sent (HTTP: refused, or an error status; stdio: no process). */
  onSendFailed: (error: unknown) => void;
  /**
   * HTTP only: the response stream of a request broke. That is how a server that dies mid-call shows
   * itself; the SDK would otherwise wait for the answer until its timeout.
   */
  onStreamBroken: (error: unknown) => void;
}

/**
 * Makes the transport of one connection, reporting the failures after which it cannot carry requests.
 * A stdio server's exit is reported by the client's `onclose` instead.
 */
export function createTransport(options: CreateTransportOptions): WatchedTransport {
  const { config } = options;
  const watched =
    config.type === 'stdio' ? stdioTransport(config) : httpTransport(config, options.onStreamBroken);
  watchSends(watched.transport, options.onSendFailed);
  shareClose(watched.transport);
  return watched;
}

function stdioTransport(config: McpStdioTransportConfig): WatchedTransport {
  const parameters: StdioServerParameters = { command: config.command, stderr: 'pipe' };
  if (config.args !== undefined) parameters.args = [...config.args];
  if (config.env !== undefined) parameters.env = { ...config.env };
  if (config.cwd !== undefined) parameters.cwd = config.cwd;
  const transport = new StdioClientTransport(parameters);
  let tail = '';
  // Piped rather than inherited so a server's logging does not garble the host's terminal; the end of it
  // explains most failures to start ("missing API key"), so it is kept for the error message.
  transport.stderr?.on('data', (chunk: Buffer | string) => {
    tail = (tail + String(chunk)).slice(-STDERR_TAIL_CHARS);
  });
  return { transport, stderrTail: () => tail.trim() };
}

function httpTransport(config: McpHttpTransportConfig, onLost: (error: unknown) => void): WatchedTransport {
  const watchedFetch = watchResponseStreams(onLost);
  const options: StreamableHTTPClientTransportOptions = {
    // The SDK sends its OAuth requests (discovery, refresh) through this fetch too.
    fetch: config.authProvider === undefined ? watchedFetch : shareRefreshes(watchedFetch),
  };
  if (config.headers !== undefined) options.requestInit = { headers: { ...config.headers } };
  if (config.authProvider !== undefined) options.authProvider = watchAuthProvider(config.authProvider);
  return { transport: new StreamableHTTPClientTransport(new URL(config.url), options), stderrTail: () => '' };
}

/** Calls `onFailure` when the transport fails to send a message, before the SDK sees the error. */
function watchSends(transport: Transport, onFailure: (error: unknown) => void): void {
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    try {
      await send(message, options);
    } catch (error) {
      onFailure(error);
      throw error;
    }
  };
}

/**
 * Makes every `close()` wait for the first one. The SDK client closes its transport by itself when
 * initialisation fails, without waiting; a second close of the stdio transport would then return at once,
 * while the server process may still be running.
 */
function shareClose(transport: Transport): void {
  const close = transport.close.bind(transport);
  let closing: Promise<void> | undefined;
  transport.close = () => {
    closing ??= close();
    return closing;
  };
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}

/**
 * A fetch that reports a broken SSE response of a POST (the stream that carries a request's answer). The
 * standing GET stream is left alone: proxies drop it while the server is fine, and the SDK reopens it.
 */
function watchResponseStreams(onBroken: (error: unknown) => void): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (init?.method !== 'POST' || response.body === null || !isEventStream(response)) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          onBroken(error);
          controller.error(error);
          return;
        }
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
