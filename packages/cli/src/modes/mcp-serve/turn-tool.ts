import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { isAgentError, type RunningTurn, type Session, type TurnStatus } from '@youyou/agent';
import { createApprovalGate, mutatingToolNames } from '../../approval/policy.js';
import { plainMessage } from '../../chat/style.js';
import type { CliSettings } from '../../config/config.js';
import type { CliRuntime } from '../../runtime/setup.js';
import { touchedPathOf } from '../../runtime/tool-set.js';
import { newWorkspaceSession } from '../../sessions/open-session.js';
import { CommandError } from '../../sessions/workspace-sessions.js';
import { neutralizeLine } from '../../text/terminal-text.js';
import { type ConsentChannel, consentPolicy } from './consent.js';
import { checkSessionOwner, recordSessionOwner } from './session-owner.js';
import { TurnProgress } from './turn-progress.js';

/** The name of the tool `youyou mcp serve` offers. */
export const TURN_TOOL_NAME = 'run_turn';

/** What one `run_turn` call answers in `structuredContent`. */
interface TurnOutput {
  [key: string]: unknown;
  answer: string;
  sessionId: string;
  status: Exclude<TurnStatus, 'suspended'>;
}

/** The tool as tools/list describes it, with the workspace it works in. */
export function turnTool(workspace: string): Tool {
  return {
    name: TURN_TOOL_NAME,
    title: 'Ask youyou',
    description: `Runs one turn of youyou, a coding agent, in the workspace ${workspace}: it reads and edits files and runs commands there, then answers. Returns the answer and a sessionId; pass that sessionId with the next prompt to continue the same conversation.`,
    inputSchema: {
      type: 'object',
      properties: {
        prompt: { type: 'string', minLength: 1, description: 'What youyou should do or answer.' },
        sessionId: {
          type: 'string',
          description:
            'The sessionId of an earlier answer, to continue that conversation; omit it to start one.',
        },
      },
      required: ['prompt'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        answer: { type: 'string', description: "youyou's answer: the text of the turn." },
        sessionId: { type: 'string', description: 'Pass it back as sessionId to continue.' },
        status: { type: 'string', enum: ['completed', 'failed', 'cancelled'] },
      },
      required: ['answer', 'sessionId', 'status'],
    },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  };
}

/** One call of the tool: its arguments, the client to ask for consent, the call's signal and the caller's tenant. */
export interface TurnCall {
  arguments: unknown;
  channel: ConsentChannel;
  /** Aborted when the client cancels the call (notifications/cancelled) or goes away. */
  signal: AbortSignal;
  /** Over HTTP, the tenant of the bearer token: a session answers only the tenant that started it. */
  tenant?: string | undefined;
  /** Tells the client how the turn goes (when it asked for progress), which also keeps its request alive. */
  progress?: ((message: string) => void) | undefined;
}

/** A refusal the client reads as the tool's error (isError), not a protocol error. */
function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function readArguments(args: unknown): { prompt: string; sessionId: string | undefined } | string {
  if (typeof args !== 'object' || args === null) return 'the arguments must be an object with a prompt';
  const { prompt, sessionId } = args as { prompt?: unknown; sessionId?: unknown };
  if (typeof prompt !== 'string' || prompt.trim() === '') return 'prompt must be a non-empty string';
  if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId === '')) {
    return 'sessionId must be the sessionId of an earlier answer';
  }
  return { prompt, sessionId };
}

/**
 * Runs `run_turn` calls on one runtime, for every client of the process: each call opens its session (a new
 * one of the workspace, or the one named), runs one turn, closes the session again and answers. A session
 * runs one call at a time; a second call on it is refused at once, calls on other sessions run side by side.
 */
export class TurnRunner {
  readonly #runtime: CliRuntime;
  readonly #settings: CliSettings;
  /** Sessions running a call now. */
  readonly #busy = new Set<string>();
  readonly #running = new Set<RunningTurn>();
  /** Sessions whose last call has answered and that are being closed. */
  readonly #closing = new Map<string, Promise<void>>();
  #closed = false;

  constructor(options: { runtime: CliRuntime; settings: CliSettings }) {
    this.#runtime = options.runtime;
    this.#settings = options.settings;
  }

  /** Answers one call; never rejects: every failure is a tool error the client reads. */
  async call(call: TurnCall): Promise<CallToolResult> {
    const args = readArguments(call.arguments);
    if (typeof args === 'string') return toolError(args);
    if (this.#closed) return toolError('youyou is shutting down');
    let session: Session | undefined;
    let claimed: string | undefined;
    try {
      if (args.sessionId === undefined) {
        session = await newWorkspaceSession(this.#runtime, this.#settings.cwd);
        claimed = session.id;
        this.#busy.add(claimed);
        await recordSessionOwner({ runtime: this.#runtime, sessionId: session.id, tenant: call.tenant });
      } else {
        const sessionId = args.sessionId;
        await checkSessionOwner({
          runtime: this.#runtime,
          sessionId,
          workspace: this.#settings.cwd,
          tenant: call.tenant,
        });
        // The session's last call may still be closing it: this call waits for that, not for a turn.
        await this.#closing.get(sessionId);
        if (this.#busy.has(sessionId)) {
          return toolError(
            `session ${sessionId} is running a turn for another call; wait for that answer, or omit sessionId to start a new session`,
          );
        }
        claimed = sessionId;
        this.#busy.add(sessionId);
        session = await this.#runtime.agent.resumeSession(sessionId);
      }
      return await this.#runTurn({ session, prompt: args.prompt, call });
    } catch (error) {
      return toolError(failureText(error));
    } finally {
      if (claimed !== undefined) this.#release(claimed, session);
    }
  }

  /** Cancels the turns still running and waits until they have ended and their sessions are closed. */
  async close(): Promise<void> {
    this.#closed = true;
    const turns = [...this.#running];
    for (const turn of turns) turn.cancel();
    await Promise.all(turns.map((turn) => turn.done));
    await Promise.all(this.#closing.values());
  }

  /**
   * Closes the session after the answer has gone (closing saves it and runs its memory extraction, which
   * the client need not wait for); the session stays claimed until it is closed.
   */
  #release(sessionId: string, session: Session | undefined): void {
    if (session === undefined) {
      this.#busy.delete(sessionId);
      return;
    }
    const closing = session
      .close()
      .catch(() => undefined)
      .finally(() => {
        this.#busy.delete(sessionId);
        this.#closing.delete(sessionId);
      });
    this.#closing.set(sessionId, closing);
  }

  async #runTurn(options: { session: Session; prompt: string; call: TurnCall }): Promise<CallToolResult> {
    const { session, call } = options;
    const approvalTimeoutMs = this.#runtime.turnOptions.approvalTimeoutMs ?? 120_000;
    // Give up a little before the runtime's window, so the model is told nobody answered, in the gate's words.
    const answerWithinMs = Math.max(500, approvalTimeoutMs - Math.min(5_000, approvalTimeoutMs / 10));
    const gate = createApprovalGate({
      mutating: mutatingToolNames(this.#runtime.tools),
      policy: consentPolicy({ channel: call.channel, yes: this.#settings.yes, answerWithinMs }),
      answerWithinMs,
      rules: this.#settings.approvalRules,
      touchedPath: touchedPathOf(this.#settings.cwd, undefined),
    });
    const turn = await session.sendMessage(options.prompt, {
      ...this.#runtime.turnOptions,
      approve: gate.approve,
    });
    this.#running.add(turn);
    const cancel = (): void => turn.cancel();
    call.signal.addEventListener('abort', cancel, { once: true });
    if (call.signal.aborted) turn.cancel();
    try {
      const { answer, errors } = await collectAnswer(turn, call.progress);
      const { status } = await turn.done;
      const output: TurnOutput = {
        answer,
        sessionId: session.id,
        status: status === 'suspended' ? 'failed' : status,
      };
      const sessionLine = { type: 'text' as const, text: `sessionId: ${session.id}` };
      if (status === 'completed') {
        return { content: [{ type: 'text', text: answer }, sessionLine], structuredContent: output };
      }
      const why = status === 'cancelled' ? 'the turn was cancelled' : errors.join('\n') || 'the turn failed';
      return {
        content: [{ type: 'text', text: why }, sessionLine],
        structuredContent: output,
        isError: true,
      };
    } finally {
      call.signal.removeEventListener('abort', cancel);
      this.#running.delete(turn);
    }
  }
}

/**
 * The answer's text and the turn's error messages; a repaired structured answer starts the text again.
 * `progress` hears each tool call's start and end, each call's output as it runs, and the answer as it comes.
 */
async function collectAnswer(
  turn: RunningTurn,
  progress: ((message: string) => void) | undefined,
): Promise<{ answer: string; errors: string[] }> {
  let answer = '';
  const errors: string[] = [];
  const told = progress === undefined ? undefined : new TurnProgress(progress);
  /** Each running call's tool name, which labels its output. */
  const running = new Map<string, string>();
  try {
    for await (const event of turn) {
      const payload = event.payload;
      if (payload.type === 'text_delta') {
        answer += payload.text;
        told?.text('answer', 'answering', payload.text, false);
      } else if (payload.type === 'tool_output_delta') {
        told?.text(payload.callId, `${running.get(payload.callId) ?? 'tool'} output`, payload.text);
      } else if (payload.type === 'tool_call_start') {
        running.set(payload.callId, payload.toolName);
        told?.step(`${neutralizeLine(payload.toolName)} running`);
      } else if (payload.type === 'tool_call_end') {
        running.delete(payload.callId);
        const outcome = payload.denied === true ? 'denied' : payload.success ? 'done' : 'failed';
        told?.step(`${neutralizeLine(payload.toolName)} ${outcome}`);
      } else if (payload.type === 'output_repair') answer = '';
      else if (payload.type === 'error') errors.push(plainMessage(payload.error.message));
    }
  } finally {
    told?.close();
  }
  return { answer, errors };
}

/** What a failure before or around the turn says to the client. */
function failureText(error: unknown): string {
  if (error instanceof CommandError) return error.message;
  if (isAgentError(error)) return plainMessage(error.message);
  return `youyou failed: ${error instanceof Error ? error.message : String(error)}`;
}
