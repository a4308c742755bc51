import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import {
  type ClientCapabilities,
  type ClientContext,
  client,
  type InitializeResponse,
  ndJsonStream,
  PROTOCOL_VERSION,
  type ReadTextFileRequest,
  type RequestPermissionRequest,
  type SessionNotification,
  type WriteTextFileRequest,
} from '@agentclientprotocol/sdk';
import { BIN } from './build.js';
import { childEnv, type Sandbox } from './cli.js';

/**
 * How the test's editor answers a permission request: an option id, `cancelled`, or `hold`: no answer until
 * the agent cancels the request (`$/cancel_request`), then `cancelled`, as the protocol asks of an editor.
 */
export type PermissionAnswer =
  | 'allow_once'
  | 'allow_always'
  | 'reject_once'
  | 'reject_always'
  | 'cancelled'
  | 'hold';

/** `youyou acp` as a child process, driven by the ACP SDK's own client side, and what it sent the editor. */
export interface AcpChild {
  /** Calls the agent: `agent.request('session/new', …)`. */
  readonly agent: ClientContext;
  readonly initialized: InitializeResponse;
  /** Every `session/update` received, in order. */
  readonly updates: SessionNotification[];
  readonly permissionRequests: RequestPermissionRequest[];
  readonly writes: WriteTextFileRequest[];
  readonly reads: ReadTextFileRequest[];
  stderr(): string;
  /** Every line the child wrote on stdout so far (each should be one JSON-RPC frame). */
  stdoutLines(): string[];
  /** Closes the editor's side (stdin) and resolves with the exit code. */
  close(): Promise<number | null>;
}

/** What the test's editor does: its answers to permission requests and the buffers its file system holds. */
export interface EditorScript {
  answer?: (request: RequestPermissionRequest) => PermissionAnswer;
  /** Offered as the client's file system when given: path -> the buffer's text. */
  buffers?: Map<string, string>;
}

/** Starts `youyou acp --base-url URL` in the sandbox and initializes it as an editor would. */
export async function startAcp(options: {
  sandbox: Sandbox;
  baseURL: string;
  editor?: EditorScript;
  /** More arguments after `acp --base-url URL`. */
  args?: readonly string[];
  /** More environment variables of the child. */
  env?: Record<string, string>;
}): Promise<AcpChild> {
  const args = [BIN, 'acp', '--base-url', options.baseURL, ...(options.args ?? [])];
  const child = spawn(process.execPath, args, {
    cwd: options.sandbox.workspace,
    env: childEnv(options.sandbox, options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const updates: SessionNotification[] = [];
  const permissionRequests: RequestPermissionRequest[] = [];
  const writes: WriteTextFileRequest[] = [];
  const reads: ReadTextFileRequest[] = [];
  const editor = options.editor ?? {};
  const buffers = editor.buffers;
  const app = client({ name: 'youyou-test-editor' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params);
    })
    .onRequest('session/request_permission', async ({ params, signal }) => {
      permissionRequests.push(params);
      const answer = editor.answer?.(params) ?? 'reject_once';
      if (answer === 'hold') {
        await new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          else signal.addEventListener('abort', () => resolve(), { once: true });
        });
      }
      return answer === 'cancelled' || answer === 'hold'
        ? { outcome: { outcome: 'cancelled' as const } }
        : { outcome: { outcome: 'selected' as const, optionId: answer } };
    })
    .onRequest('fs/read_text_file', ({ params }) => {
      reads.push(params);
      return { content: buffers?.get(params.path) ?? '' };
    })
    .onRequest('fs/write_text_file', ({ params }) => {
      writes.push(params);
      buffers?.set(params.path, params.content);
      return {};
    });
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin),
      Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
    ),
  );
  const clientCapabilities: ClientCapabilities =
    buffers === undefined ? {} : { fs: { readTextFile: true, writeTextFile: true } };
  const initialized = await connection.agent.request('initialize', {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities,
  });
  return {
    agent: connection.agent,
    initialized,
    updates,
    permissionRequests,
    writes,
    reads,
    stderr: () => stderr,
    stdoutLines: () => stdout.split('\n').filter((line) => line !== ''),
    close: async () => {
      connection.close();
      child.stdin.end();
      return exited;
    },
  };
}

/** The text of the `agent_message_chunk` updates received so far. */
export function agentText(updates: readonly SessionNotification[]): string {
  return updates
    .map(({ update }) =>
      update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text'
        ? update.content.text
        : '',
    )
    .join('');
}
