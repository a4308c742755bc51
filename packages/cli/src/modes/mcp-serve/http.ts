import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ConfigError } from '../../config/values.js';
import type { CliIo } from '../../runtime/cli-io.js';
import { neutralizeLine } from '../../text/terminal-text.js';
import { createMcpServer } from './mcp-server.js';
import type { TurnRunner } from './turn-tool.js';

/** The path the MCP endpoint answers on. */
const MCP_PATH = '/mcp';

/** One MCP session over HTTP: its transport and the tenant whose token opened it. */
interface HttpSession {
  transport: StreamableHTTPServerTransport;
  tenant: string;
}

/** A JSON-RPC error body with no id, as the transport itself answers requests it refuses. */
function refuse(response: ServerResponse, status: number, message: string, headers = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
}

/** The token of an `Authorization: Bearer …` header, or undefined. */
function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  return header === undefined ? undefined : /^Bearer +(\S+)\s*$/i.exec(header)?.[1];
}

/**
 * Serves MCP over Streamable HTTP at `http://host:port/mcp` until SIGINT or SIGTERM. Every request needs a
 * bearer token of `youyou serve` (401 otherwise); each MCP session (the Mcp-Session-Id the transport hands out)
 * has its own server and stays with the tenant whose token opened it.
 */
export async function serveHttp(options: {
  runner: TurnRunner;
  workspace: string;
  io: CliIo;
  tokens: Record<string, string>;
  port: number;
  host: string;
}): Promise<void> {
  const { io } = options;
  const { tokenResolver } = await import('@youyou/server');
  const tenantOf = tokenResolver({ tokens: options.tokens });
  const sessions = new Map<string, HttpSession>();

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== MCP_PATH) {
      refuse(response, 404, `not found; the MCP endpoint is ${MCP_PATH}`);
      return;
    }
    const token = bearerToken(request);
    const tenant = token === undefined ? undefined : await tenantOf(token);
    if (typeof tenant !== 'string') {
      refuse(response, 401, 'send a valid Authorization: Bearer <token> header', {
        'www-authenticate': 'Bearer',
      });
      return;
    }
    const sessionId = request.headers['mcp-session-id'];
    if (sessionId !== undefined) {
      const session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      // Another tenant's session is answered as an unknown one: its id tells nothing.
      if (session === undefined || session.tenant !== tenant) {
        refuse(response, 404, 'Session not found');
        return;
      }
      await session.transport.handleRequest(request, response);
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, tenant });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    const server = createMcpServer({ runner: options.runner, workspace: options.workspace, tenant });
    server.onerror = (error) => io.warn(`MCP: ${error.message}`);
    await server.connect(transport);
    await transport.handleRequest(request, response);
    // A first request that was not a valid initialize opened no session: nothing will reach this server again.
    if (transport.sessionId === undefined) await server.close();
  };

  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      io.warn(`MCP over HTTP: ${error instanceof Error ? error.message : String(error)}`);
      if (!response.headersSent) refuse(response, 500, 'internal error');
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new ConfigError(
              `${neutralizeLine(options.host)}:${options.port} is in use; choose another --port`,
            )
          : error,
      );
    });
    http.listen(options.port, options.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  io.stdout.write(
    `youyou: MCP server on http://${neutralizeLine(host)}:${port}${MCP_PATH} (${Object.keys(options.tokens).length} token(s)), workspace ${neutralizeLine(options.workspace)}\n`,
  );
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (received: NodeJS.Signals): void => {
      // A second signal while youyou shuts down ends the process at once, as Node does by default.
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(received);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  io.stderr.write(`youyou: ${signal}, stopping\n`);
  await options.runner.close();
  for (const session of [...sessions.values()]) await session.transport.close();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
