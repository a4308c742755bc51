import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of PostgreSQL, so a test can take the server away for real: `stop()`
 * drops every connection and closes the port (clients get ECONNREFUSED), `start()` opens it again.
 */
export class TcpProxy {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #port = 0;
  #muted = false;

  private constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  /** A running proxy to `target` on a free port. */
  static async open(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await proxy.start();
    return proxy;
  }

  /** The port clients connect to. */
  get port(): number {
    return this.#port;
  }

  /** Opens the port (the same one after a stop). */
  async start(): Promise<void> {
    if (this.#server !== undefined) return;
    const server = createServer((client) => this.#forward(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    if (typeof address === 'object' && address !== null) this.#port = address.port;
    this.#server = server;
  }

  /** While muted, what the server sends is dropped: requests arrive and run, their answers never come back. */
  mute(muted: boolean): void {
    this.#muted = muted;
  }

  /** Drops every connection and closes the port. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #forward(client: Socket): void {
    const upstream = createConnection(this.#target);
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (!this.#muted) client.write(chunk);
    });
    upstream.on('end', () => client.end());
  }
}

/** A port nothing listens on (bound, then closed at once). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}
