import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentBuilder, type SessionStorage, type ToolHandler } from '@youyou/agent';
import { ScriptedModelProvider, type ScriptedResponse } from '@youyou/agent/testing';
import { openSqliteStorage } from '@youyou/sqlite';
import {
  createServer,
  type HeldElicitations,
  type ListeningServer,
  listen,
  type ServerCors,
  type ServerLimits,
} from '../../src/index.js';

/** The tokens of the two tenants every test server knows. */
export const TOKENS = { alice: 'token-alice-1234', bob: 'token-bob-5678' } as const;

/** A server on 127.0.0.1 over a real SQLite file and a scripted model. */
export interface Harness {
  url: string;
  provider: ScriptedModelProvider;
  databasePath: string;
  /** fetch on the server with tenant `as` (no Authorization header when `as` is null). */
  request(
    path: string,
    init?: RequestInit & { as?: keyof typeof TOKENS | null; json?: unknown },
  ): Promise<Response>;
  close(): Promise<void>;
}

/** Starts a harness; `tools` are registered on the agent, `maxActiveSessions` defaults to 4. */
export async function startHarness(
  options: {
    responses?: ScriptedResponse[];
    tools?: ToolHandler[];
    limits?: ServerLimits;
    cors?: ServerCors;
    maxActiveSessions?: number;
    /** The agent's `approvalWindowMs`. */
    approvalWindowMs?: number;
    /** An existing database (a restart); it is left in place on close. */
    databasePath?: string;
    /** The server's `continueInterrupted`. */
    continueInterrupted?: 'auto' | 'on-request';
    /** Puts something between the agent (and the server) and the SQLite storage: a gate on a write, a failure. */
    wrapStorage?: (storage: SessionStorage) => SessionStorage;
    /** The server's held MCP questions. */
    elicitations?: HeldElicitations;
  } = {},
): Promise<Harness> {
  const folder =
    options.databasePath === undefined ? await mkdtemp(join(tmpdir(), 'youyou-server-')) : undefined;
  const databasePath = options.databasePath ?? join(folder ?? '', 'agent.db');
  const storage = await openSqliteStorage(databasePath);
  const sessions = options.wrapStorage?.(storage.sessions) ?? storage.sessions;
  const provider = new ScriptedModelProvider({ responses: options.responses ?? [] });
  let builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    maxActiveSessions: options.maxActiveSessions ?? 4,
    ...(options.approvalWindowMs === undefined ? {} : { approvalWindowMs: options.approvalWindowMs }),
  })
    .registerModelProvider(provider)
    .registerSessionStorage(sessions);
  for (const tool of options.tools ?? []) builder = builder.registerTool(tool);
  const agent = await builder.build();
  const server = createServer({
    agent,
    storage: sessions,
    auth: { tokens: { [TOKENS.alice]: 'alice', [TOKENS.bob]: 'bob' } },
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.cors === undefined ? {} : { cors: options.cors }),
    ...(options.continueInterrupted === undefined
      ? {}
      : { continueInterrupted: options.continueInterrupted }),
    ...(options.elicitations === undefined ? {} : { elicitations: options.elicitations }),
  });
  const listening: ListeningServer = await listen(server);
  return {
    url: listening.url,
    provider,
    databasePath,
    request: (path, init = {}) => {
      const { as = 'alice', json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (as !== null) headers.set('authorization', `Bearer ${TOKENS[as]}`);
      if (json !== undefined) headers.set('content-type', 'application/json');
      return fetch(`${listening.url}${path}`, {
        ...rest,
        headers,
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    },
    close: async () => {
      await listening.close();
      await agent.shutdown();
      await storage.close();
      if (folder !== undefined) await rm(folder, { recursive: true, force: true });
    },
  };
}

/** One server-sent event as a client parses it. */
export interface SseMessage {
  id: string | undefined;
  event: string | undefined;
  data: { sequence: number; turnId: string; payload: { type: string; [key: string]: unknown } };
}

/** Reads the SSE messages of a response one by one (comments skipped). */
export async function* readSse(response: Response): AsyncGenerator<SseMessage> {
  if (response.body === null) throw new Error('the response has no body');
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: string | undefined;
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) yield { id, event, data: JSON.parse(data.join('\n')) };
    }
  }
}

/** Reads SSE messages until (and including) the first for which `stop` is true, or the stream's end. */
export async function readUntil(
  response: Response,
  stop: (message: SseMessage) => boolean,
): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const message of readSse(response)) {
    messages.push(message);
    if (stop(message)) break;
  }
  return messages;
}

/** Whether a message ends a turn. */
export function isTurnEnd(message: SseMessage): boolean {
  return ['turn_complete', 'turn_cancelled', 'turn_suspended'].includes(message.data.payload.type);
}

/**
 * Waits (polling its status) until the server forgot the session: closed, and the journal a status makes
 * for it has issued nothing (the one before, with the session's events, was dropped after the retention).
 */
export async function untilForgotten(harness: Harness, sessionId: string): Promise<void> {
  for (;;) {
    const status = (await (await harness.request(`/sessions/${sessionId}`)).json()) as {
      active: boolean;
      lastSequence: number;
    };
    if (!status.active && status.lastSequence === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Creates a session as `as` and answers its id. */
export async function createSession(harness: Harness, as: keyof typeof TOKENS = 'alice'): Promise<string> {
  const response = await harness.request('/sessions', { method: 'POST', as, json: {} });
  if (response.status !== 201) throw new Error(`POST /sessions answered ${response.status}`);
  return ((await response.json()) as { sessionId: string }).sessionId;
}

/** A mutating `deploy` tool that needs approval and records the arguments of each run in `ran`. */
export function deployTool(ran: unknown[] = []): ToolHandler {
  return {
    name: 'deploy',
    description: 'deploys a service',
    parametersSchema: { type: 'object', properties: { service: { type: 'string' } } },
    isMutating: true,
    needsApproval: true,
    execute: async (input) => {
      ran.push(input.arguments);
      const service = (input.arguments as { service?: unknown }).service;
      return { content: service === undefined ? 'deployed' : `deployed ${String(service)}`, isError: false };
    },
  };
}
