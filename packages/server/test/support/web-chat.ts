import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AgentBuilder,
  type ChatEvent,
  type ModelPricing,
  type ModelProvider,
  type ToolHandler,
} from '@youyou/agent';
import { ScriptedModelProvider, scriptedModel } from '@youyou/agent/testing';
import { openSqliteStorage } from '@youyou/sqlite';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  createServer,
  type HeldElicitations,
  listen,
  type ServerLimits,
  type ServerOptions,
} from '../../src/index.js';

/** Screenshots are kept here as test artifacts (gitignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../../../artifacts/web-chat/', import.meta.url));
/** The README's screenshots; written only when UPDATE_SCREENSHOTS=1. */
export const DOCS = fileURLToPath(new URL('../../../../docs/', import.meta.url));
/** The tokens of the two tenants every chat server knows. */
export const TOKENS = { alice: 'web-token-alice-1234', bob: 'web-token-bob-5678' } as const;

/** A server with the web chat on 127.0.0.1 over a real SQLite file; only the model's answers are scripted. */
export interface ChatServer {
  url: string;
  provider: ScriptedModelProvider;
  folder: string;
  /** Stops the server; its database is removed unless `keepDatabase`. */
  close(keepDatabase?: boolean): Promise<void>;
}

/**
 * A chat server on a fresh database serving `webChat` (the shipped page by default), or on `restart.folder`'s
 * database and port (a restarted server); `approvalWindowMs` is the agent's.
 */
export async function startChatServer(
  options: {
    tools?: ToolHandler[];
    webChat?: ServerOptions['webChat'];
    restart?: { folder: string; port: number };
    approvalWindowMs?: number;
    limits?: ServerLimits;
    /** The scripted model's prices, so that usage carries a cost. */
    pricing?: ModelPricing;
    /** The server's held MCP questions. */
    elicitations?: HeldElicitations;
    /**
     * Awaited before each event the scripted model sends: a test holds the stream there until the page has
     * reached a state (drawn a chunk, had an element marked), so nothing hangs on how fast the machine is.
     */
    pace?: (event: ChatEvent) => Promise<void>;
  } = {},
): Promise<ChatServer> {
  const { tools = [], webChat = true, restart } = options;
  const folder = restart?.folder ?? (await mkdtemp(join(tmpdir(), 'youyou-web-chat-')));
  const storage = await openSqliteStorage(join(folder, 'agent.db'));
  const provider = new ScriptedModelProvider({
    responses: [],
    ...(options.pricing === undefined ? {} : { models: [scriptedModel({ pricing: options.pricing })] }),
  });
  let builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    maxActiveSessions: 4,
    ...(options.approvalWindowMs === undefined ? {} : { approvalWindowMs: options.approvalWindowMs }),
  })
    .registerModelProvider(options.pace === undefined ? provider : paced(provider, options.pace))
    .registerSessionStorage(storage.sessions);
  for (const tool of tools) builder = builder.registerTool(tool);
  const agent = await builder.build();
  const server = createServer({
    agent,
    storage: storage.sessions,
    auth: { tokens: { [TOKENS.alice]: 'alice', [TOKENS.bob]: 'bob' } },
    webChat,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.elicitations === undefined ? {} : { elicitations: options.elicitations }),
  });
  const listening = await listen(server, restart === undefined ? {} : { port: restart.port });
  return {
    url: listening.url,
    provider,
    folder,
    close: async (keepDatabase = false) => {
      await listening.close();
      await agent.shutdown();
      await storage.close();
      if (!keepDatabase) await rm(folder, { recursive: true, force: true });
    },
  };
}

/** `provider`'s answers, each event sent once `pace(event)` has resolved. */
function paced(provider: ModelProvider, pace: (event: ChatEvent) => Promise<void>): ModelProvider {
  return {
    id: provider.id,
    models: provider.models,
    async *chat(request, signal) {
      for await (const event of await provider.chat(request, signal)) {
        await pace(event);
        yield event;
      }
    },
  };
}

/** How a test's browser context looks: a laptop (1280×800) or a phone (390×844), light or dark. */
export interface ViewOptions {
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
}

export const LAPTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/**
 * A fresh browser context (its own storage, kept in `contexts` for closing) on the chat page with the tenant's
 * token in the hash, and the session's id when given.
 */
export async function openChat(
  browser: Browser,
  contexts: BrowserContext[],
  chat: ChatServer,
  options: ViewOptions & { as?: keyof typeof TOKENS; sessionId?: string } = {},
): Promise<Page> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 900, height: 560 },
    colorScheme: options.colorScheme ?? 'light',
  });
  contexts.push(context);
  const page = await context.newPage();
  const hash = `token=${TOKENS[options.as ?? 'alice']}${options.sessionId === undefined ? '' : `&session=${options.sessionId}`}`;
  await page.goto(`${chat.url}/#${hash}`);
  return page;
}

/** Types `text` in the message box and clicks Send. */
export async function send(page: Page, text: string): Promise<void> {
  await page.fill('#message', text);
  await page.click('#send');
}

/** Saves a screenshot among the test artifacts, and into docs/ when UPDATE_SCREENSHOTS=1. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, name) });
  if (process.env.UPDATE_SCREENSHOTS === '1') await page.screenshot({ path: join(DOCS, name) });
}

/** The session id the page's address names. */
export function sessionIdOf(page: Page): string {
  return new URLSearchParams(new URL(page.url()).hash.slice(1)).get('session') ?? '';
}
