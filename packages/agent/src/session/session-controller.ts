import { randomUUID } from 'node:crypto';
import { checkNotSuspended, checkRunOptions } from '../approvals/checks.js';
import { interruptedTurnView, turnEndedRecord } from '../approvals/interrupted-turn.js';
import type { InterruptedTurn, TurnRunOptions } from '../kernel/approval-types.js';
import { TurnAbortController } from '../kernel/cancel-scope.js';
import { checkBudget } from '../kernel/config-validation.js';
import { AgentError, toAgentError } from '../kernel/error.js';
import type { AgentEvent, AgentEventPayload } from '../kernel/event.js';
import type { UserInput } from '../kernel/types.js';
import type { Observers } from '../model/observation.js';
import { planStructuredOutput, type SendMessageOptions } from '../output/structured-output.js';
import type { ModelPricing } from '../ports/model.js';
import { sessionBudgetGate } from '../turn/model-gate.js';
import { EventChannel, RunningTurn, type TurnResult } from '../turn/running-turn.js';
import type { AgentRuntime, SessionState } from '../turn/session-state.js';
import { SteeringInbox } from '../turn/steering-inbox.js';
import { runTurn } from '../turn/turn.js';
import type { TurnOptions } from '../turn/turn-options.js';
import { copyUsageTotals, emptyUsageTotals } from '../usage/usage.js';
import { checkCompactInstructions, startCompaction } from './compact-now.js';
import { type FollowUp, refuseFollowUps, requeueUntakenSteering } from './follow-ups.js';
import { continuation, recordDecision, type TurnStart } from './held-turns.js';
import { normaliseUserInput } from './input.js';
import { checkRewindOptions, rewindSession } from './rewind.js';
import { finishSession, hasCloseWork, releaseSessionClaim, settleRunningTurn } from './session-close.js';
import { notifyTurnStart, turnEmitter } from './turn-events.js';

/** The turn a controller runs now. */
interface ActiveTurn {
  controller: AbortController;
  /** Settles when the turn (or the on-demand compaction) has ended. */
  done: Promise<unknown>;
  /** The turn's handle, inbox and emitter; unset while `compact()` holds the slot (no turn runs). */
  turn?: {
    handle: RunningTurn;
    inbox: SteeringInbox;
    emit: (payload: AgentEventPayload) => void;
  };
}

/** The agent's side of the one-active-session slot. */
export interface SessionSlot {
  /** Frees the slot held by this controller. */
  release(controller: SessionController): void;
  /** True once the agent is shut down. */
  readonly isShutDown: boolean;
  /** The agent's runtime now: the tools of the last `replaceTools`, for the next turn. */
  readonly runtime: AgentRuntime;
}

/**
 * The internal owner of a session: its state, its running turn and its close paths (0006 §8). The
 * agent's slot and the background turn hold this, never the public `Session`, so that an abandoned
 * `Session` can be garbage-collected while its turn still runs.
 */
export class SessionController {
  readonly state: SessionState;
  private readonly slot: SessionSlot;
  private activeTurn: ActiveTurn | undefined;
  private readonly followUps: FollowUp[] = [];
  private closing: Promise<void> | undefined;
  /** The approver of the last turn a caller started: turns that steering or follow-ups start keep it. */
  private lastRun: TurnRunOptions | undefined;
  private released = false;
  private abandoned = false;

  constructor(options: { state: SessionState; slot: SessionSlot }) {
    this.state = options.state;
    this.slot = options.slot;
  }

  /** The agent's runtime as it is now (`Agent.replaceTools` swaps it between turns). */
  private get runtime(): AgentRuntime {
    return this.slot.runtime;
  }

  /** The pricing of a model id, from the registered providers' catalogues. */
  readonly priceOf = (modelId: string): ModelPricing | undefined =>
    this.runtime.models.find(modelId)?.info.pricing;

  /** True once close, shutdown or abandonment has begun. */
  get isClosed(): boolean {
    return this.closing !== undefined;
  }

  /** True while a turn runs. */
  get isTurnRunning(): boolean {
    return this.activeTurn !== undefined;
  }

  /** The handle of the running turn, if any. */
  get currentTurn(): RunningTurn | undefined {
    return this.activeTurn?.turn?.handle;
  }

  /** Starts a turn in the background and returns its handle (0006 §8 send_message). */
  startTurn(input: UserInput | string, options?: SendMessageOptions): RunningTurn {
    const run = checkRunOptions(options);
    this.checkIdle();
    checkNotSuspended(this.state, 'sending a message');
    const content = normaliseUserInput(input, this.state.model.info);
    const budget = checkBudget('sendMessage options.budget', run.budget, 'INVALID_INPUT');
    // A new message gives up an interrupted turn: its unfinished calls keep the interrupted result.
    this.state.interrupted = undefined;
    this.lastRun = run;
    return this.begin({ content, output: planStructuredOutput(options), run, budget });
  }

  /**
   * Continues the suspended turn: its decided calls run (denied ones get an error result), then the turn goes on;
   * or, with none suspended, the turn a crash cut (a new turn id): its unfinished calls are reconciled first.
   */
  continueTurn(options?: TurnRunOptions): RunningTurn {
    const run = checkRunOptions(options);
    const budget = checkBudget('continue options.budget', run.budget, 'INVALID_INPUT');
    this.checkIdle();
    return this.begin(continuation(this.state, run, budget));
  }

  /** The turn a crash cut, as the public Session shows it; undefined when there is none. */
  interruptedTurn(): InterruptedTurn | undefined {
    const cut = this.state.interrupted;
    return cut === undefined ? undefined : interruptedTurnView(this.runtime.tools, cut.record);
  }

  /** Records (in the log) a decision on a pending call of the suspended turn. */
  async decide(callId: unknown, approved: boolean, reason?: unknown): Promise<void> {
    if (this.closing !== undefined || this.slot.isShutDown) {
      throw new AgentError({ code: 'SESSION_CLOSED', message: `session '${this.state.id}' is closed` });
    }
    await recordDecision({ session: this.state, callId, approved, reason });
  }

  /**
   * Compacts the context now (prune, then summarise), as a turn would; holds the turn slot meanwhile, so a
   * turn cannot start during it. Resolves with the events it emitted once the compacted context is saved.
   */
  async compact(instructions: string | undefined): Promise<AgentEvent[]> {
    checkCompactInstructions(instructions);
    this.checkIdle();
    checkNotSuspended(this.state, 'compacting');
    const state = this.state;
    const turnId = randomUUID();
    if (state.interrupted !== undefined) {
      // Compacting gives up an interrupted turn; the log says so, or a later resume would find it cut again.
      state.interrupted = undefined;
      await state.log.append(turnEndedRecord(turnId, 'abandoned'));
    }
    const { controller, run, done, events } = startCompaction({
      runtime: this.runtime,
      state,
      turnId,
      instructions,
    });
    this.activeTurn = { controller, done };
    void done.finally(() => {
      this.activeTurn = undefined;
      if (this.closing !== undefined && this.abandoned) void this.release();
    });
    await run;
    return events;
  }

  /** Cuts the context before a turn (`Session.rewind`): refused while a turn runs or waits for approvals. */
  async rewind(options: unknown): Promise<void> {
    const toTurnId = checkRewindOptions(options);
    this.checkIdle();
    checkNotSuspended(this.state, 'rewinding');
    await rewindSession(this.state, toTurnId);
  }

  /** Throws SESSION_CLOSED or TURN_BUSY when the session cannot start work now. */
  private checkIdle(): void {
    this.assertOpen();
    if (this.activeTurn !== undefined) throw this.busyError();
  }

  private busyError(): AgentError {
    return new AgentError({
      code: 'TURN_BUSY',
      message: `a turn is already running in session '${this.state.id}'; wait for it or cancel it first`,
    });
  }

  /** Adds a message to the running turn at its next step boundary; with no turn running, starts one. */
  steer(input: UserInput | string): RunningTurn {
    this.assertOpen();
    const content = normaliseUserInput(input, this.state.model.info);
    const active = this.activeTurn;
    if (active === undefined) {
      checkNotSuspended(this.state, 'steering');
      this.state.interrupted = undefined;
      return this.begin({ content });
    }
    if (active.turn === undefined) throw this.busyError();
    active.turn.inbox.push(content);
    return active.turn.handle;
  }

  /** Queues a message that starts the next turn once the running one (and earlier follow-ups) ended. */
  followUp(input: UserInput | string): Promise<RunningTurn> {
    this.assertOpen();
    const content = normaliseUserInput(input, this.state.model.info);
    const active = this.activeTurn;
    if (active === undefined && this.followUps.length === 0) {
      checkNotSuspended(this.state, 'a follow-up');
      this.state.interrupted = undefined;
      return Promise.resolve(this.begin({ content }));
    }
    return new Promise((resolve, reject) => {
      this.followUps.push({ content, started: { resolve, reject } });
      active?.turn?.emit({ type: 'follow_up_queued', content });
    });
  }

  /** Throws SESSION_CLOSED once the session is closing or the agent shut down. */
  private assertOpen(): void {
    if (this.closing !== undefined || this.slot.isShutDown) {
      throw new AgentError({ code: 'SESSION_CLOSED', message: `session '${this.state.id}' is closed` });
    }
  }

  /** Starts a turn in the background and makes it the session's running turn. */
  private begin(options: TurnStart): RunningTurn {
    const { content, output, resume } = options;
    const turnId = options.turnId ?? randomUUID();
    const controller = new TurnAbortController();
    const channel = new EventChannel();
    const state = this.state;
    // Read once: tools replaced while this turn runs are the next turn's (`Agent.replaceTools`).
    const runtime = this.runtime;
    const inbox = new SteeringInbox();
    if (options.steered !== undefined) for (const message of options.steered) inbox.push(message);
    // Asked once: a turn no observer wants pays nothing for observation.
    const observers = runtime.observers.enabledNow();
    const emit = turnEmitter(state, turnId, channel, observers);
    if (observers !== undefined) notifyTurnStart(observers, state, turnId, content);
    const budgetGate = sessionBudgetGate({
      runtime,
      session: state,
      turnBudget: options.budget,
      inTurn: true,
    });
    runtime.turns.open(turnId, {
      sessionId: state.id,
      budgetGate,
      depth: 0,
      emit,
      log: state.log,
      model: state.model,
    });
    // A continued turn counts afresh: its `done` and `turn_complete` carry the usage since it was continued.
    const usageTotals = emptyUsageTotals();
    const recordUsage = state.usage.sink({
      log: state.log,
      priceOf: this.priceOf,
      emit,
      turnTotals: usageTotals,
    });
    const turnOptions: TurnOptions = {
      runtime,
      session: state,
      input: { content },
      turnId,
      signal: controller.signal,
      cancelScope: controller.scope,
      emit,
      steering: inbox,
      approval: options.run ?? this.lastRun ?? {},
      recordUsage,
      usageTotals,
      budgetGate,
    };
    // Set only when present (no empty objects spread in for the others).
    if (resume !== undefined) turnOptions.resume = resume;
    if (options.interrupted !== undefined) turnOptions.interrupted = options.interrupted;
    if (output !== undefined) turnOptions.output = output;
    if (observers !== undefined) turnOptions.observers = observers;
    const done = this.runInBackground({ turnOptions, observers, inbox, channel });
    const handle = new RunningTurn({ turnId, channel, controller, done });
    this.activeTurn = { controller, done, turn: { handle, inbox, emit } };
    return handle;
  }

  /**
   * Runs a turn to its end, then frees the session: the stream closes only once the session is idle again, so a
   * reader that sends the next message as the stream ends is not refused. One async function rather than a chain
   * of `then`s: the stream closes (and `done` settles) fewer microtasks after the turn's last event.
   */
  private async runInBackground(run: {
    turnOptions: TurnOptions;
    observers: Observers | undefined;
    inbox: SteeringInbox;
    channel: EventChannel;
  }): Promise<TurnResult> {
    const { turnOptions, observers, inbox, channel } = run;
    const { turnId } = turnOptions;
    let settled: TurnResult;
    try {
      try {
        settled = await runTurn(turnOptions);
      } catch (error) {
        // runTurn reports its own failures; this only guards against a bug escaping it.
        this.runtime.config.onBackgroundError(
          toAgentError(error, 'INTERNAL_ERROR', 'a turn failed unexpectedly'),
        );
        const usage = copyUsageTotals(turnOptions.usageTotals ?? emptyUsageTotals());
        turnOptions.emit({ type: 'turn_complete', usage });
        settled = { status: 'failed', usage };
      }
      observers?.notify({ type: 'turn_end', sessionId: this.state.id, turnId, status: settled.status });
    } finally {
      turnOptions.runtime.turns.close(turnId);
      channel.close();
      this.activeTurn = undefined;
      // Steered messages the turn did not take (it ended or was cancelled first) start the next turn.
      if (inbox.hasPending) requeueUntakenSteering(this.followUps, inbox);
      this.startNextFollowUp();
      if (this.closing !== undefined && this.abandoned) void this.release();
    }
    return settled;
  }

  /** Starts the oldest queued follow-up; once the session is closing, refuses them all instead. */
  private startNextFollowUp(): void {
    const next = this.followUps.shift();
    if (next === undefined) return;
    if (this.closing !== undefined || this.slot.isShutDown) {
      refuseFollowUps(this.followUps, next, this.state.id);
      return;
    }
    const turn = this.begin({ content: next.content, steered: next.steered ?? [] });
    next.started?.resolve(turn);
  }

  /** The full close path of `close()` and `shutdown()`: SessionEnd and memory extraction run. */
  close(options: { cancelRunning: boolean }): Promise<void> {
    this.closing ??= this.runClose(options.cancelRunning);
    return this.closing;
  }

  /** The abandoned path: cancel the turn, skip SessionEnd and memory, free the slot once the turn settled. */
  abandon(): void {
    if (this.closing !== undefined) return;
    this.abandoned = true;
    this.closing = Promise.resolve();
    const turn = this.activeTurn;
    if (turn === undefined) {
      void this.release();
      return;
    }
    turn.controller.abort();
  }

  private async runClose(cancelRunning: boolean): Promise<void> {
    // An idle session (the usual close) has no turn to wait for: no call, no promise.
    const turn = this.activeTurn;
    if (turn !== undefined) await settleRunningTurn({ turn, cancelRunning, config: this.runtime.config });
    try {
      const { state, runtime } = this;
      if (hasCloseWork(state, runtime)) await finishSession({ state, runtime, priceOf: this.priceOf });
    } finally {
      await this.release();
    }
  }

  /**
   * Releases the storage's claim on the session (bounded by the tool timeout, so close never hangs on it),
   * then frees the agent's slot: once close() resolves, other processes can have the session. Never rejects.
   */
  private async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    // A storage that makes no claims has none to release: the slot is freed without a wait.
    if (this.state.claim !== undefined) {
      await releaseSessionClaim({
        claim: this.state.claim,
        sessionId: this.state.id,
        config: this.runtime.config,
      });
    }
    this.slot.release(this);
  }
}
