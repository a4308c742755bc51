import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentBuilder, type ToolHandler } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { openSqliteStorage, type SqliteStorage } from '@youyou/sqlite';
import { build } from 'vite';
import { createServer, listen } from '../../src/index.js';

/** The app under test: examples/react-chat. */
const APP_FOLDER = fileURLToPath(new URL('../../../../examples/react-chat/', import.meta.url));
/** Screenshots are kept here as test artifacts (gitignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../../../artifacts/react-chat/', import.meta.url));
/** The tokens of the two tenants the test server knows. */
export const TOKENS = { alice: 'react-token-alice-1234', bob: 'react-token-bob-5678' } as const;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** The bundled app served by a static HTTP server of its own (its origin is `url`). */
export interface AppBundle {
  url: string;
  close(): Promise<void>;
}

/**
 * Bundles examples/react-chat with vite's JS API (production mode, no config file) into a temp folder and
 * serves that folder on 127.0.0.1: the origin the browser loads the app from, not the agent server's.
 */
export async function bundleReactChat(): Promise<AppBundle> {
  const outDir = await mkdtemp(join(tmpdir(), 'youyou-react-chat-'));
  await build({
    root: APP_FOLDER,
    configFile: false,
    mode: 'production',
    logLevel: 'error',
    // The test runner's NODE_ENV is `test`, which would give a development build: the bundle is React's
    // production build, with JSX compiled for it.
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    oxc: { jsx: { runtime: 'automatic', development: false } },
    build: { outDir, emptyOutDir: true },
  });
  const http = createHttpServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const file = normalize(join(outDir, path === '/' ? 'index.html' : decodeURIComponent(path)));
    const type = CONTENT_TYPES[extname(file)];
    if (!file.startsWith(outDir + sep) || type === undefined) {
      response.writeHead(404).end();
      return;
    }
    readFile(file).then(
      (body) => response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body),
      () => response.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  await mkdir(ARTIFACTS, { recursive: true });
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/** A YouYou server for the app: a real SQLite file, a scripted model, CORS for the app's origin only. */
export interface ReactChatServer {
  url: string;
  provider: ScriptedModelProvider;
  /** The storage the agent writes the sessions' logs to. */
  storage: SqliteStorage;
  close(): Promise<void>;
}

/** Starts a server whose CORS allows `origin` (the app's), with `tools` registered on its agent. */
export async function startReactChatServer(options: {
  origin: string;
  tools?: ToolHandler[];
}): Promise<ReactChatServer> {
  const folder = await mkdtemp(join(tmpdir(), 'youyou-react-chat-server-'));
  const storage = await openSqliteStorage(join(folder, 'agent.db'));
  const provider = new ScriptedModelProvider({ responses: [] });
  let builder = new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 4 })
    .registerModelProvider(provider)
    .registerSessionStorage(storage.sessions);
  for (const tool of options.tools ?? []) builder = builder.registerTool(tool);
  const agent = await builder.build();
  const server = createServer({
    agent,
    storage: storage.sessions,
    auth: { tokens: { [TOKENS.alice]: 'alice', [TOKENS.bob]: 'bob' } },
    cors: { origin: [options.origin] },
  });
  const listening = await listen(server);
  return {
    url: listening.url,
    provider,
    storage,
    close: async () => {
      await listening.close();
      await agent.shutdown();
      await storage.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
