import { Readable, Writable } from 'node:stream';
import {
  type AgentContext,
  agent,
  type InitializeResponse,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
} from '@agentclientprotocol/sdk';
import type { FlagSettings } from '../../config/args.js';
import type { CliIo } from '../../runtime/cli-io.js';
import { packageVersion } from '../../runtime/version.js';
import { AcpSessions } from './acp-sessions.js';

/** What `initialize` answers: the protocol version both sides speak, and what youyou offers. */
function initializeResponse(): InitializeResponse {
  return {
    // Only version 1 exists; a client asking for another is answered with ours, and decides for itself.
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: false, sse: false },
      sessionCapabilities: { close: {} },
    },
    agentInfo: { name: 'youyou', title: 'youyou', version: packageVersion() },
    authMethods: [],
  };
}

/**
 * `youyou acp`: the Agent Client Protocol over stdio, for editors (Zed, JetBrains, Neovim plugins). Stdout
 * carries only protocol frames; warnings and logs go to stderr. Resolves with 0 when the editor closes stdin.
 */
export async function runAcp(options: { flags: FlagSettings; io: CliIo }): Promise<number> {
  const { io } = options;
  let client: AgentContext | undefined;
  const clientContext = (): AgentContext => {
    if (client === undefined) throw new Error('the editor is not connected');
    return client;
  };
  const sessions = new AcpSessions({ flags: options.flags, io, client: clientContext });
  const warnOfMcpServers = (count: number): void => {
    if (count > 0) io.warn('the MCP servers the editor offers are not used; configure them in config.json');
  };
  const app = agent({ name: 'youyou' })
    .onConnect((connection) => {
      client = connection.client;
    })
    .onRequest(methods.agent.initialize, ({ params }) => {
      sessions.setClientCapabilities(params.clientCapabilities);
      return initializeResponse();
    })
    .onRequest(methods.agent.session.new, async ({ params }) => {
      warnOfMcpServers(params.mcpServers.length);
      return sessions.newSession(params.cwd);
    })
    .onRequest(methods.agent.session.load, async ({ params }) => {
      warnOfMcpServers(params.mcpServers.length);
      await sessions.loadSession(params.sessionId, params.cwd);
      return {};
    })
    .onRequest(methods.agent.session.prompt, async ({ params }) => ({
      stopReason: await sessions.prompt(params.sessionId, params.prompt),
    }))
    .onRequest(methods.agent.session.close, async ({ params }) => {
      await sessions.closeSession(params.sessionId);
      return {};
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      sessions.cancel(params.sessionId);
    });
  const stream = ndJsonStream(
    Writable.toWeb(io.stdout),
    Readable.toWeb(io.stdin) as unknown as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  await connection.closed;
  await sessions.close();
  return 0;
}
