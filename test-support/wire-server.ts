import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request the server received, with its JSON body parsed. */
export interface WireRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  rawBody: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: unknown;
}

/** One server-sent event: `data` objects are JSON-encoded; `raw` is written as is (for malformed lines). */
export type WireEvent = { event?: string; data: unknown } | { raw: string };

/** How the server answers one request. */
export type WireReply =
  | {
      type: 'sse';
      events: readonly WireEvent[];
      status?: number;
      headers?: Record<string, string>;
      /** Destroy the socket after this many events, as a dropped connection would. */
      dropAfter?: number;
      /** Keep the stream open after the events until the client goes away. */
      hang?: boolean;
    }
  | { type: 'json'; status: number; body: unknown; headers?: Record<string, string> };

/** A reply, or a function that builds one from the request (a promise of one: the reply waits for it). */
export type WireScript = WireReply | ((request: WireRequest) => WireReply | Promise<WireReply>);

/** A scripted HTTP server on 127.0.0.1 that speaks a model API's wire format, one reply per request. */
export interface WireServer {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly requests: WireRequest[];
  /** Queues replies, used in order; a request with no reply left gets a 500 saying so. */
  enqueue(...replies: WireScript[]): void;
  /** Resolves when a client has closed a streaming response before the server ended it. */
  clientClosed(): Promise<void>;
  close(): Promise<void>;
}

function formatEvent(event: WireEvent): string {
  if ('raw' in event) return event.raw;
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  return `${event.event === undefined ? '' : `event: ${event.event}\n`}data: ${data}\n\n`;
}

/** Starts a wire server on a free loopback port. */
export async function startWireServer(): Promise<WireServer> {
  const queue: WireScript[] = [];
  const requests: WireRequest[] = [];
  const sockets = new Set<Socket>();
  const closeWaiters: (() => void)[] = [];
  let closedEarly = 0;

  const notifyClientClosed = (): void => {
    closedEarly += 1;
    for (const waiter of closeWaiters.splice(0)) waiter();
  };

  const answer = (reply: WireReply, response: ServerResponse): void => {
    if (reply.type === 'json') {
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      response.end(JSON.stringify(reply.body));
      return;
    }
    response.writeHead(reply.status ?? 200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...reply.headers,
    });
    let finished = false;
    response.on('close', () => {
      if (!finished) notifyClientClosed();
    });
    reply.events.forEach((event, index) => {
      if (reply.dropAfter !== undefined && index >= reply.dropAfter) return;
      response.write(formatEvent(event));
    });
    if (reply.dropAfter !== undefined) {
      finished = true;
      // Let the written events reach the client, then cut the connection without ending the stream.
      setImmediate(() => response.socket?.destroy());
      return;
    }
    if (reply.hang) return;
    finished = true;
    response.end();
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = rawBody === '' ? undefined : JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const received: WireRequest = {
        method: request.method ?? 'GET',
        path: request.url ?? '/',
        headers: request.headers,
        rawBody,
        body,
      };
      requests.push(received);
      const script = queue.shift();
      if (script === undefined) {
        answer(
          { type: 'json', status: 500, body: { error: { message: 'wire server: no reply scripted' } } },
          response,
        );
        return;
      }
      const reply = typeof script === 'function' ? script(received) : script;
      if (reply instanceof Promise) void reply.then((ready) => answer(ready, response));
      else answer(reply, response);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    clientClosed: () =>
      closedEarly > 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            closeWaiters.push(resolve);
          }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
