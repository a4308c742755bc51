import { type ServerType, serve } from '@hono/node-server';

/** A server listening on a port: its address, and `close()` that stops it and closes its sessions. */
export interface ListeningServer {
  port: number;
  host: string;
  url: string;
  close(): Promise<void>;
}

/** What `listen` serves: a fetch handler and what to close before the listener (a YouyouServer is one). */
export interface Listenable {
  fetch: (request: Request) => Response | Promise<Response>;
  close(): Promise<void>;
}

/** Starts `server` on `host:port` (default 127.0.0.1 and a free port) and resolves once it listens. */
export function listen(
  server: Listenable,
  options: { port?: number; host?: string } = {},
): Promise<ListeningServer> {
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    let http: ServerType | undefined;
    const onError = (error: Error): void => reject(error);
    http = serve({ fetch: server.fetch, port: options.port ?? 0, hostname: host }, (info) => {
      http?.off('error', onError);
      const urlHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        port: info.port,
        host,
        url: `http://${urlHost}:${info.port}`,
        close: async () => {
          // Streams end first (their turns are cancelled), so closing the listener does not wait on them.
          await server.close();
          await new Promise<void>((done) => {
            http?.close(() => done());
            if (http !== undefined && 'closeAllConnections' in http) http.closeAllConnections();
          });
        },
      });
    });
    http.once('error', onError);
  });
}
