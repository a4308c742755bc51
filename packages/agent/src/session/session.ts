import { pendingCallsOf } from '../approvals/held-batch.js';
import type { InterruptedTurn, PendingToolCall, TurnRunOptions } from '../kernel/approval-types.js';
import type { AgentEvent } from '../kernel/event.js';
import type { Message, RewindOptions, SessionTurn, UsageTotals, UserInput } from '../kernel/types.js';
import type { SendMessageOptions } from '../output/structured-output.js';
import type { RunningTurn } from '../turn/running-turn.js';
import type { SessionController } from './session-controller.js';

const abandonedSessions = new FinalizationRegistry<SessionController>((controller) => controller.abandon());

/**
 * One conversation. `sendMessage` rejects at once for programmer mistakes (TURN_BUSY, SESSION_CLOSED,
 * INVALID_INPUT); everything that happens during the turn arrives as events on the RunningTurn.
 * A Session dropped without `close()` is cleaned up when it is garbage-collected: its turn is
 * cancelled and the agent's slot freed, but SessionEnd and memory extraction do not run.
 */
export class Session implements AsyncDisposable {
  /** The session id, as in the storage and in every event. */
  readonly id: string;
  private readonly controller: SessionController;

  /** Made by `Agent.newSession` and `Agent.resumeSession`. */
  constructor(controller: SessionController) {
    this.controller = controller;
    this.id = controller.state.id;
    abandonedSessions.register(this, controller, controller);
  }

  /** The model this session talks to. */
  get modelId(): string {
    return this.controller.state.model.info.id;
  }

  /** True while a turn runs. */
  get isTurnRunning(): boolean {
    return this.controller.isTurnRunning;
  }

  /**
   * The session's usage so far: the sum of every model call's usage (turns, their sub-agents, compaction,
   * memory, including the memory extraction of `close()`), restored from the log when the session is resumed.
   */
  usage(): UsageTotals {
    return this.controller.state.usage.totals();
  }

  /** A copy of the context the model sees next (the history after compactions). */
  messages(): Message[] {
    return structuredClone(this.controller.state.context.messages as Message[]);
  }

  /**
   * The turns of the current context, oldest first, each with the user's input: those a `rewind` can return to
   * (a rewind drops turns, a compaction the turns it summarised). Steered messages belong to the turn they joined.
   */
  turns(): SessionTurn[] {
    return this.controller.state.context.turns.list.map((turn) => ({
      turnId: turn.turnId,
      input: structuredClone(turn.input),
    }));
  }

  /**
   * Returns the context to the state before the turn `toTurnId`: it and every later turn leave the context (and
   * `turns()`); the log keeps them and records the rewind, so a resume rebuilds the rewound context. Usage is not
   * rewound (what those turns cost was spent). A turn a crash cut is given up. Rejects with TURN_NOT_FOUND for a
   * turn not in `turns()` (unknown, rewound away, summarised by a compaction), TURN_BUSY while a turn runs or
   * waits for approvals, INVALID_INPUT, SESSION_CLOSED, and STORAGE_ERROR when saving the marker fails (the
   * rewind holds; the marker is written before the session's next event).
   */
  async rewind(options: RewindOptions): Promise<void> {
    await this.controller.rewind(options);
  }

  /**
   * Starts a turn; its events come from the returned RunningTurn. A plain string is one text block.
   * With `options.output` the turn's final answer must be JSON valid against its schema: the parsed value
   * comes in `turn_complete.output` and `RunningTurn.done`; a bad schema rejects with INVALID_INPUT.
   * `options.approve` decides calls of tools that need approval; without it such a call suspends the turn.
   * Rejects with TURN_BUSY while a turn runs or a suspended turn waits for `continue()`.
   */
  async sendMessage(input: UserInput | string, options?: SendMessageOptions): Promise<RunningTurn> {
    return this.controller.startTurn(input, options);
  }

  /** The calls the suspended turn waits on (empty when no turn is suspended), decided or not. */
  pendingApprovals(): PendingToolCall[] {
    const batch = this.controller.state.heldBatch;
    return batch === undefined ? [] : structuredClone(pendingCallsOf(batch));
  }

  /**
   * The turn a crash cut (found when the session was resumed), until it is continued or a new message gives it up:
   * `continue()` runs the rest of it. Undefined when the last turn ended, or is suspended (see `pendingApprovals`).
   */
  interruptedTurn(): InterruptedTurn | undefined {
    return this.controller.interruptedTurn();
  }

  /** Approves a pending call; saved in the log. INVALID_INPUT when the call does not wait for approval. */
  async approve(callId: string): Promise<void> {
    await this.controller.decide(callId, true);
  }

  /** Denies a pending call; the model gets an error result with `reason`. Saved in the log; INVALID_INPUT as `approve`. */
  async deny(callId: string, reason?: string): Promise<void> {
    await this.controller.decide(callId, false, reason);
  }

  /**
   * Continues the suspended turn (same turn id): approved calls run, denied ones get an error result with the
   * reason, and the turn goes on with the model. Every pending call needs a decision first, unless
   * `options.approve` is given to decide the rest; otherwise INVALID_INPUT, as when nothing is suspended.
   * With no turn suspended, continues the turn a crash cut (`interruptedTurn()`), in a new turn id, from where
   * its log stops: its calls without a result run again, but a mutating one that may have run (its tool is not
   * `idempotent`) waits for approval, marked `mayHaveRun`, as with `turn_suspended`; a cut answer is asked again.
   */
  async continue(options?: TurnRunOptions): Promise<RunningTurn> {
    return this.controller.continueTurn(options);
  }

  /**
   * Compacts the context now: old tool results are pruned, then the older history is summarised (with
   * `instructions` added to the compaction prompt), as an automatic compaction would. Resolves once the
   * compacted context is saved, with the events it emitted (`context_compacted`, and any `error` of a
   * BeforeCompact hook). Rejects with COMPACT_ERROR when no summary can be had (the context is unchanged but
   * for pruning), TURN_BUSY while a turn runs, SESSION_CLOSED after close, STORAGE_ERROR when saving fails.
   */
  async compact(instructions?: string): Promise<AgentEvent[]> {
    return this.controller.compact(instructions);
  }

  /**
   * Adds a message to the running turn: it enters the context (and is saved) at the turn's next step
   * boundary, before its next model call and never between a tool call and its result, with a `steered`
   * event. A turn that would end calls the model once more to take it; one that ends (or is cancelled)
   * before taking it hands it to a new turn (see `currentTurn`). With no turn running it starts one.
   * Answers with the turn the message was given to.
   */
  async steer(input: UserInput | string): Promise<RunningTurn> {
    return this.controller.steer(input);
  }

  /**
   * Queues a message that starts the next turn when the running one ends (in order, after earlier
   * follow-ups); the running turn emits `follow_up_queued`. Resolves with the follow-up's RunningTurn once it
   * has started (at once when no turn runs); rejects SESSION_CLOSED if the session closes first.
   */
  async followUp(input: UserInput | string): Promise<RunningTurn> {
    return this.controller.followUp(input);
  }

  /** The running turn's handle, whoever started it (sendMessage, steer or a follow-up); undefined when idle. */
  get currentTurn(): RunningTurn | undefined {
    return this.controller.currentTurn;
  }

  /** Waits for a running turn, runs SessionEnd and memory extraction, and frees the agent for a new session. */
  close(): Promise<void> {
    abandonedSessions.unregister(this.controller);
    // The controller's close promise itself (it never throws at once): no async frame of its own around it.
    return this.controller.close({ cancelRunning: false });
  }

  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
