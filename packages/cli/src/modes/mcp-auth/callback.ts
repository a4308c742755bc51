import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The loopback listener the authorization server redirects the browser back to, once. */
export interface CallbackListener {
  /** `http://127.0.0.1:PORT/callback`: the redirect URL the client registers and asks for. */
  readonly redirectUrl: string;
  /**
   * Resolves with the `code` of the first redirect that carries the expected `state`; rejects when that
   * redirect carries an error instead, or when none came within the timeout. The listener closes either way.
   */
  readonly code: Promise<string>;
  /** Stops listening (the code, if still awaited, rejects). */
  close(): void;
}

const PAGE_STYLE = 'font-family: sans-serif; margin: 3em;';

function page(response: ServerResponse, status: number, text: string): void {
  const escaped = text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
  response.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // No keep-alive: once the answer is sent, nothing holds the listener (or the process) open.
    connection: 'close',
  });
  response.end(`<!doctype html><title>youyou</title><p style="${PAGE_STYLE}">${escaped}</p>\n`);
}

/**
 * Listens on 127.0.0.1 at a free port for `GET /callback?code=…&state=…`. A redirect whose `state` is not
 * `expectedState` is refused (400) and the listener goes on waiting: it may come from another page, and only
 * the browser this login opened knows the state.
 */
export async function listenForCallback(options: {
  expectedState: string;
  timeoutMs: number;
  /** The port of the last login, tried first so that its client registration (bound to it) serves again. */
  preferredPort?: number | undefined;
}): Promise<CallbackListener> {
  let settle: { resolve: (code: string) => void; reject: (error: Error) => void } | undefined;
  const code = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // The caller may not await `code` before it closes the listener on another failure.
  code.catch(() => undefined);
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== '/callback') return page(response, 404, 'Not found.');
    if (url.searchParams.get('state') !== options.expectedState) {
      return page(response, 400, 'This answer does not belong to the login youyou is waiting for.');
    }
    const error = url.searchParams.get('error');
    const received = url.searchParams.get('code');
    if (error !== null || received === null || received === '') {
      const description = url.searchParams.get('error_description');
      page(response, 400, 'The login failed; see the terminal.');
      finish(
        new Error(
          `the authorization server answered ${error ?? 'without a code'}${description ? `: ${description}` : ''}`,
        ),
      );
      return;
    }
    page(response, 200, 'Logged in. You can close this tab and return to the terminal.');
    finish(received);
  });
  const timer = setTimeout(
    () =>
      finish(new Error(`no answer from the browser within ${Math.round(options.timeoutMs / 1000)} seconds`)),
    options.timeoutMs,
  );
  function finish(outcome: string | Error): void {
    clearTimeout(timer);
    // One use: nothing more is accepted, and the port is given back.
    server.close();
    server.closeIdleConnections();
    if (typeof outcome === 'string') settle?.resolve(outcome);
    else settle?.reject(outcome);
  }
  const listen = (port: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await listen(options.preferredPort ?? 0);
  } catch (error) {
    if (options.preferredPort === undefined) throw error;
    await listen(0); // taken by something else now: any free port, and a new registration
  }
  server.on('error', (error) => finish(error));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUrl: `http://127.0.0.1:${port}/callback`,
    code,
    close: () => finish(new Error('the login was stopped')),
  };
}
