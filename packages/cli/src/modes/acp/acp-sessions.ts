import path from 'node:path';
import {
  type AgentContext,
  type ClientCapabilities,
  RequestError,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
} from '@agentclientprotocol/sdk';
import { type AgentError, type Approver, isAgentError, type RunningTurn, type Session } from '@youyou/agent';
import type { ApprovalAnswer, ApprovalRequest } from '../../approval/policy.js';
import { plainMessage } from '../../chat/style.js';
import type { FlagSettings } from '../../config/args.js';
import { resolveSettings } from '../../config/config.js';
import { ConfigError } from '../../config/values.js';
import type { CliIo } from '../../runtime/cli-io.js';
import { type CliRuntime, openHomeStorage, setUpRuntime } from '../../runtime/setup.js';
import { newWorkspaceSession } from '../../sessions/open-session.js';
import { openWorkspace, type Workspace } from '../../tools/workspace.js';
import { withClientFiles } from './client-files.js';
import { EditorPermissions } from './permission.js';
import { userInputOf } from './prompt-content.js';
import { type AnnouncedCall, historyUpdates, TurnUpdates } from './session-updates.js';
import { TurnStopReasons } from './stop-reasons.js';

/** Sessions one editor may hold open at once. */
const MAX_OPEN_SESSIONS = 64;

/** The runtime of one workspace folder: built from the settings the terminal would use in that folder. */
interface WorkspaceRuntime {
  runtime: CliRuntime;
  /** The folder as the terminal records it for its sessions. */
  cwd: string;
  workspace: Workspace;
}

/** One ACP session: our session, the folder it works in, and its running turn. */
interface OpenSession {
  session: Session;
  home: WorkspaceRuntime;
  turn: RunningTurn | undefined;
  cancelled: boolean;
}

/** The calls of a session that their permission request showed the editor before they ran. */
interface ShownCalls {
  announced: Map<string, AnnouncedCall>;
  diffs: Map<string, ToolCallContent[]>;
}

/** Failures caused by what the editor sent (a folder that is not one, a bad prompt): invalid params. */
const BAD_INPUT_CODES: ReadonlySet<string> = new Set(['INVALID_INPUT', 'INVALID_CONFIG']);

/** An ACP error for a failure of ours: bad input is invalid params, an unknown session not found, the rest internal. */
function requestErrorOf(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  const message = plainMessage(error instanceof Error ? error.message : String(error));
  if (isAgentError(error) && error.code === 'SESSION_NOT_FOUND')
    return RequestError.resourceNotFound(message);
  if (error instanceof ConfigError || (isAgentError(error) && BAD_INPUT_CODES.has(error.code))) {
    return new RequestError(-32602, message);
  }
  return new RequestError(-32603, message);
}

/**
 * The sessions of one `youyou acp` connection. Each workspace folder an editor opens a session in gets its
 * runtime, set up as the terminal's would be in that folder (config, sandbox, approval and deny rules,
 * secrets kept from tools); calls the terminal would ask about are put to the editor.
 */
export class AcpSessions {
  readonly #flags: FlagSettings;
  readonly #io: CliIo;
  readonly #client: () => AgentContext;
  readonly #permissions: EditorPermissions;
  readonly #runtimes = new Map<string, Promise<WorkspaceRuntime>>();
  readonly #sessions = new Map<string, OpenSession>();
  /** Which session each call waiting for approval belongs to (the gate's question names only the call). */
  readonly #callSessions = new Map<string, string>();
  /** Each session's updates, sent strictly in order (an approval's update must follow its call's). */
  readonly #sending = new Map<string, Promise<void>>();
  readonly #shownCalls = new Map<string, ShownCalls>();
  #capabilities: ClientCapabilities = {};
  /** One for all runtimes: turn ids are unique. */
  readonly #stopReasons = new TurnStopReasons();

  constructor(options: { flags: FlagSettings; io: CliIo; client: () => AgentContext }) {
    this.#flags = options.flags;
    this.#io = options.io;
    this.#client = options.client;
    this.#permissions = new EditorPermissions(options.client);
  }

  /** Keeps what the editor offers (its file system), from `initialize`. */
  setClientCapabilities(capabilities: ClientCapabilities | undefined): void {
    this.#capabilities = capabilities ?? {};
  }

  #runtimeFor(cwd: string): Promise<WorkspaceRuntime> {
    if (!path.isAbsolute(cwd)) {
      return Promise.reject(
        RequestError.invalidParams(undefined, `cwd must be an absolute path, got '${cwd}'`),
      );
    }
    const known = this.#runtimes.get(cwd);
    if (known !== undefined) return known;
    const started = this.#startRuntime(cwd);
    this.#runtimes.set(cwd, started);
    started.catch(() => this.#runtimes.delete(cwd));
    return started;
  }

  async #startRuntime(cwd: string): Promise<WorkspaceRuntime> {
    const io = this.#io;
    const settings = resolveSettings({ flags: { ...this.#flags, cwd }, env: io.env, warn: io.warn });
    const onBackgroundError = (error: AgentError): void => io.warn(plainMessage(error.message));
    const fs = this.#capabilities.fs ?? {};
    const workspace = openWorkspace(settings.cwd, { readOnly: settings.sandbox.mode === 'read-only' });
    const home: { workspace: Workspace } = { workspace };
    const runtime = await setUpRuntime({
      settings,
      env: io.env,
      warn: io.warn,
      notice: (text) => io.stderr.write(`youyou: ${text}\n`),
      onBackgroundError,
      openStorage: () => openHomeStorage({ settings, onBackgroundError }),
      maxActiveSessions: MAX_OPEN_SESSIONS,
      plugins: [this.#stopReasons.plugin],
      approval: settings.yes
        ? { type: 'allow_all' }
        : { type: 'ask', ask: (request, signal) => this.#ask(home.workspace, request, signal) },
      adaptTools: (tools, confined) => {
        // The same confinement as the tools (hidden paths included) for diffs and linked files.
        home.workspace = confined;
        const offered = fs.readTextFile === true || fs.writeTextFile === true;
        return offered ? withClientFiles(tools, confined, { client: this.#client, capabilities: fs }) : tools;
      },
    });
    return { runtime, cwd: settings.cwd, workspace: home.workspace };
  }

  async #ask(workspace: Workspace, request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const sessionId = this.#callSessions.get(request.callId);
    if (sessionId === undefined) return { type: 'deny', reason: 'no editor session asked for this call' };
    const answer = await this.#permissions.ask({
      sessionId,
      workspace,
      request,
      signal,
      announce: async (call) => {
        const shown = this.#shown(sessionId);
        shown.announced.set(request.callId, 'asked');
        if (call.content.length > 0) shown.diffs.set(request.callId, call.content);
        await this.#notify(sessionId, { sessionUpdate: 'tool_call', ...call, status: 'pending' });
      },
    });
    // A refused call is shown pending, then failed: never as running.
    const shown = this.#shown(sessionId).announced;
    if (answer.type === 'deny' && shown.has(request.callId)) shown.set(request.callId, 'refused');
    return answer;
  }

  async #notify(sessionId: string, update: SessionUpdate): Promise<void> {
    await this.#inOrder(sessionId, () => this.#client().notify('session/update', { sessionId, update }));
  }

  /** Runs `send` after every earlier send of the session; a failed one does not stop the later ones. */
  #inOrder(sessionId: string, send: () => Promise<void>): Promise<void> {
    const sent = (this.#sending.get(sessionId) ?? Promise.resolve()).then(send);
    this.#sending.set(
      sessionId,
      sent.catch(() => undefined),
    );
    return sent;
  }

  /** The calls of the session that permission requests have shown the editor, and their diffs. */
  #shown(sessionId: string): ShownCalls {
    let shown = this.#shownCalls.get(sessionId);
    if (shown === undefined) {
      shown = { announced: new Map(), diffs: new Map() };
      this.#shownCalls.set(sessionId, shown);
    }
    return shown;
  }

  #open(sessionId: string): OpenSession {
    const open = this.#sessions.get(sessionId);
    if (open === undefined) throw RequestError.resourceNotFound(sessionId);
    return open;
  }

  /** `session/close`: stops the session's turn and frees it (SessionEnd and memory extraction run). */
  async closeSession(sessionId: string): Promise<void> {
    const open = this.#sessions.get(sessionId);
    if (open === undefined) return;
    this.#sessions.delete(sessionId);
    this.#shownCalls.delete(sessionId);
    open.turn?.cancel();
    await open.session.close();
  }

  /**
   * Makes room for one more session: at the limit the least recently used idle one is closed (editors open
   * a session per thread and seldom close them; a closed one can be loaded again).
   */
  async #makeRoom(): Promise<void> {
    if (this.#sessions.size < MAX_OPEN_SESSIONS) return;
    for (const [sessionId, open] of this.#sessions) {
      if (open.turn === undefined) {
        await this.closeSession(sessionId);
        return;
      }
    }
  }

  /** `session/new`: a new session working in `cwd`. */
  async newSession(cwd: string): Promise<{ sessionId: string }> {
    try {
      const home = await this.#runtimeFor(cwd);
      await this.#makeRoom();
      const session = await newWorkspaceSession(home.runtime, home.cwd);
      this.#sessions.set(session.id, { session, home, turn: undefined, cancelled: false });
      return { sessionId: session.id };
    } catch (error) {
      throw requestErrorOf(error);
    }
  }

  /** `session/load`: a stored session, its history replayed as updates before the answer. */
  async loadSession(sessionId: string, cwd: string): Promise<void> {
    try {
      const home = await this.#runtimeFor(cwd);
      let open = this.#sessions.get(sessionId);
      if (open === undefined) {
        await this.#makeRoom();
        const session = await home.runtime.agent.resumeSession(sessionId);
        open = { session, home, turn: undefined, cancelled: false };
        this.#sessions.set(sessionId, open);
      }
      for (const update of await historyUpdates(open.home.workspace, open.session.messages())) {
        await this.#notify(sessionId, update);
      }
    } catch (error) {
      throw requestErrorOf(error);
    }
  }

  /** `session/prompt`: runs one turn, streaming its updates; answers how it stopped. */
  async prompt(sessionId: string, prompt: Parameters<typeof userInputOf>[1]): Promise<StopReason> {
    const open = this.#open(sessionId);
    if (open.turn !== undefined) throw RequestError.invalidRequest(undefined, 'a turn is already running');
    // A cancel that comes while the prompt is read (its linked files) cancels the turn it starts.
    open.cancelled = false;
    const { runtime, workspace } = open.home;
    const gate = runtime.turnOptions.approve;
    const approve: Approver | undefined =
      gate === undefined
        ? undefined
        : async (request, signal) => {
            this.#callSessions.set(request.callId, sessionId);
            try {
              return await gate(request, signal);
            } finally {
              this.#callSessions.delete(request.callId);
            }
          };
    let turn: RunningTurn;
    try {
      const input = await userInputOf(workspace, prompt);
      turn = await open.session.sendMessage(input, { ...runtime.turnOptions, ...(approve && { approve }) });
    } catch (error) {
      throw requestErrorOf(error);
    }
    open.turn = turn;
    if (open.cancelled) turn.cancel();
    // The most recently used last: #makeRoom closes from the front.
    this.#sessions.delete(sessionId);
    this.#sessions.set(sessionId, open);
    try {
      return await this.#streamTurn(open, turn);
    } finally {
      open.turn = undefined;
    }
  }

  async #streamTurn(open: OpenSession, turn: RunningTurn): Promise<StopReason> {
    const sessionId = open.session.id;
    const updates = new TurnUpdates({
      workspace: open.home.workspace,
      ...this.#shown(sessionId),
      later: (make) => this.#queueUpdates(sessionId, () => [make()]),
    });
    let failure: AgentError | undefined;
    for await (const event of turn) {
      if (event.payload.type === 'error') {
        failure = event.payload.error;
        this.#io.warn(plainMessage(failure.message));
      }
      // Queued as it is read, before its updates are made: what the approval sends later comes after it.
      const payload = event.payload;
      this.#queueUpdates(sessionId, () => updates.of(payload));
    }
    await this.#sending.get(sessionId);
    updates.dispose();
    const { status } = await turn.done;
    const modelStop = this.#stopReasons.take(turn.turnId);
    if (status === 'cancelled' || open.cancelled) return 'cancelled';
    if (failure?.code === 'MAX_TOOL_CALLS_EXCEEDED') return 'max_turn_requests';
    if (status === 'failed') throw requestErrorOf(failure ?? new Error('the turn failed'));
    return modelStop === 'max_tokens' ? 'max_tokens' : 'end_turn';
  }

  /** Queues updates made when their turn to be sent comes, after everything queued before them. */
  #queueUpdates(
    sessionId: string,
    make: () => Promise<Array<SessionUpdate | undefined>> | Array<SessionUpdate | undefined>,
  ): void {
    void this.#inOrder(sessionId, async () => {
      for (const update of await make()) {
        if (update !== undefined) await this.#client().notify('session/update', { sessionId, update });
      }
    }).catch((error: unknown) => this.#io.warn(`an update was not sent: ${String(error)}`));
  }

  /** `session/cancel`: the running turn stops; its prompt answers `cancelled`. */
  cancel(sessionId: string): void {
    const open = this.#sessions.get(sessionId);
    if (open === undefined) return;
    open.cancelled = true;
    open.turn?.cancel();
  }

  /** Ends every turn and closes every session and runtime (the editor went away). Never rejects. */
  async close(): Promise<void> {
    for (const open of this.#sessions.values()) open.turn?.cancel();
    for (const started of this.#runtimes.values()) {
      const home = await started.catch(() => undefined);
      await home?.runtime.close().catch(() => undefined);
    }
  }
}
