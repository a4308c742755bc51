import { randomUUID } from 'node:crypto';
import {
  checkContinuable,
  checkNotSuspended,
  checkRunOptions,
  type HeldBatch,
  type PendingToolCall,
  pendingCallsOf,
  recordDecision,
  type TurnRunOptions,
} from './approvals.js';
import { compactOnDemand } from './compact-step.js';
import type { ResolvedConfig } from './config.js';
import { AgentError, toAgentError } from './error.js';
import type { AgentEvent, AgentEventPayload } from './event.js';
import { normaliseUserInput } from './input.js';
import { observedProvider } from './observation.js';
import type { ModelPricing } from './ports/model.js';
import type { SessionClaim } from './ports/storage.js';
import { EventChannel, RunningTurn, type TurnResult, type TurnStatus } from './running-turn.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import { settleWithin } from './settle.js';
import { SteeringInbox } from './steering-inbox.js';
import {
  planStructuredOutput,
  type SendMessageOptions,
  type StructuredOutputPlan,
} from './structured-output.js';
import { runTurn } from './turn.js';
import type { ContentBlock, Message, UsageTotals, UserInput } from './types.js';
import { copyUsageTotals, emptyUsageTotals } from './usage.js';
import { describeKind } from './value-kind.js';

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

/** A message given to `followUp`, waiting for the running turn to end. */
interface FollowUp {
  content: ContentBlock[];
  /** Steered messages that go in right after `content`, each as its own user message. */
  steered?: ContentBlock[][];
  /** Receives the turn the message starts; undefined for steered messages the turn did not take. */
  started?: { resolve: (turn: RunningTurn) => void; reject: (error: unknown) => void };
}

/** The agent's side of the one-active-session slot. */
export interface SessionSlot {
  /** Frees the slot held by this controller. */
  release(controller: SessionController): void;
  /** True once the agent is shut down. */
  readonly isShutDown: boolean;
}

/**
 * The internal owner of a session: its state, its running turn and its close paths (0006 §8). The
 * agent's slot and the background turn hold this, never the public `Session`, so that an abandoned
 * `Session` can be garbage-collected while its turn still runs.
 */
export class SessionController {
  readonly state: SessionState;
  private readonly runtime: AgentRuntime;
  private readonly slot: SessionSlot;
  private activeTurn: ActiveTurn | undefined;
  private readonly followUps: FollowUp[] = [];
  private closing: Promise<void> | undefined;
  private released = false;
  private abandoned = false;

  constructor(options: { state: SessionState; runtime: AgentRuntime; slot: SessionSlot }) {
    this.state = options.state;
    this.runtime = options.runtime;
    this.slot = options.slot;
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
    return this.begin({ content, output: planStructuredOutput(options), run });
  }

  /** Continues the suspended turn: its decided calls run (denied ones get an error result), then the turn goes on. */
  continueTurn(options?: TurnRunOptions): RunningTurn {
    const run = checkRunOptions(options);
    this.checkIdle();
    const batch = checkContinuable(this.state, run);
    this.state.heldBatch = undefined;
    return this.begin({ turnId: batch.turnId, content: [], run, resume: batch });
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
    if (instructions !== undefined && typeof instructions !== 'string') {
      throw new AgentError({
        code: 'INVALID_INPUT',
        message: `compact(instructions) takes a string or nothing, got ${describeKind(instructions)}`,
      });
    }
    this.checkIdle();
    checkNotSuspended(this.state, 'compacting');
    const controller = new AbortController();
    const state = this.state;
    const turnId = randomUUID();
    const events: AgentEvent[] = [];
    const emit = (payload: AgentEventPayload): void => {
      events.push({
        sessionId: state.id,
        turnId,
        timestamp: new Date(),
        sequence: state.nextSequence++,
        payload,
      });
    };
    const run = compactOnDemand({
      runtime: this.runtime,
      session: state,
      turnId,
      signal: controller.signal,
      emit,
      instructions,
      observers: this.runtime.observers.enabledNow(),
    });
    const done = run.then(
      (): TurnStatus => 'completed',
      (): TurnStatus => 'failed',
    );
    this.activeTurn = { controller, done };
    void done.finally(() => {
      this.activeTurn = undefined;
      if (this.closing !== undefined && this.abandoned) void this.release();
    });
    await run;
    return events;
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

  /** Starts a turn in the background: `steered` messages enter before its model call, `output` asks for JSON. */
  private begin(options: {
    content: ContentBlock[];
    steered?: ContentBlock[][];
    output?: StructuredOutputPlan | undefined;
    run?: TurnRunOptions;
    /** Set to continue a suspended turn (same turn id): its held batch runs first. */
    resume?: HeldBatch;
    turnId?: string;
  }): RunningTurn {
    const { content, output, resume } = options;
    const turnId = options.turnId ?? randomUUID();
    const controller = new AbortController();
    const channel = new EventChannel();
    const state = this.state;
    const inbox = new SteeringInbox();
    for (const message of options.steered ?? []) inbox.push(message);
    // Asked once: a turn no observer wants pays nothing for observation.
    const observers = this.runtime.observers.enabledNow();
    let ended = false;
    const emit = (payload: AgentEventPayload): void => {
      // Nothing comes after the terminal event, not even a follow_up_queued given in the last moment.
      if (ended) return;
      if (payload.type === 'turn_complete' || payload.type === 'turn_cancelled') ended = true;
      const event = {
        sessionId: state.id,
        turnId,
        timestamp: new Date(),
        sequence: state.nextSequence++,
        payload,
      };
      channel.push(event);
      observers?.notify({ type: 'agent_event', event });
    };
    if (observers !== undefined) {
      const { provider, info } = state.model;
      observers.notify({
        type: 'turn_start',
        sessionId: state.id,
        turnId,
        providerId: provider.id,
        modelId: info.id,
        input: content,
      });
    }
    this.runtime.turns.open(turnId, {
      sessionId: state.id,
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
    const done = runTurn({
      runtime: this.runtime,
      session: state,
      input: { content },
      turnId,
      signal: controller.signal,
      emit,
      steering: inbox,
      approval: options.run ?? {},
      recordUsage,
      usageTotals,
      ...(resume === undefined ? {} : { resume }),
      ...(output === undefined ? {} : { output }),
      ...(observers === undefined ? {} : { observers }),
    })
      .catch((error: unknown): TurnResult => {
        // runTurn reports its own failures; this only guards against a bug escaping it.
        this.runtime.config.onBackgroundError(
          toAgentError(error, 'INTERNAL_ERROR', 'a turn failed unexpectedly'),
        );
        const usage = copyUsageTotals(usageTotals);
        emit({ type: 'turn_complete', usage });
        return { status: 'failed', usage };
      })
      .then((settled) => {
        observers?.notify({ type: 'turn_end', sessionId: state.id, turnId, status: settled.status });
        return settled;
      })
      .finally(() => {
        this.runtime.turns.close(turnId);
        channel.close();
        this.activeTurn = undefined;
        // Steered messages the turn did not take (it ended or was cancelled first) start the next turn.
        // The first is the new turn's input; the others enter it as steered messages, before its model call.
        const [first, ...others] = inbox.take();
        if (first !== undefined) this.followUps.unshift({ content: first, steered: others });
        this.startNextFollowUp();
        if (this.closing !== undefined && this.abandoned) void this.release();
      });
    const handle = new RunningTurn({ turnId, channel, controller, done });
    this.activeTurn = { controller, done, turn: { handle, inbox, emit } };
    return handle;
  }

  /** Starts the oldest queued follow-up; once the session is closing, refuses them all instead. */
  private startNextFollowUp(): void {
    const next = this.followUps.shift();
    if (next === undefined) return;
    if (this.closing !== undefined || this.slot.isShutDown) {
      const refused = new AgentError({
        code: 'SESSION_CLOSED',
        message: `session '${this.state.id}' closed before the follow-up message could start a turn`,
      });
      for (const followUp of [next, ...this.followUps.splice(0)]) followUp.started?.reject(refused);
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
    const { config, hooks, memory } = this.runtime;
    const turn = this.activeTurn;
    if (turn !== undefined) {
      if (cancelRunning) {
        turn.controller.abort();
        // A cancelled turn settles within the tool timeout; shutdown() must not hang on one that does not.
        await settleWithin(turn.done, config.toolTimeoutMs);
      } else {
        await turn.done;
      }
    }
    const state = this.state;
    try {
      if (hooks.has('SessionEnd')) {
        const outcome = await hooks.dispatch({
          event: 'SessionEnd',
          sessionId: state.id,
          data: { turnCount: state.turnCount },
          timeoutMs: config.toolTimeoutMs,
        });
        for (const error of outcome.errors) config.onBackgroundError(error);
      }
      if (memory !== undefined && state.sinceCheckpoint.length > 0) await this.extractAtClose();
      // Bounded like every other wait of close: a storage that never answers must not hang it.
      const flushed = await settleWithin(state.log.flush(), config.toolTimeoutMs);
      if (flushed.status === 'rejected') {
        config.onBackgroundError(
          toAgentError(flushed.error, 'STORAGE_ERROR', 'saving the session at close failed'),
        );
      } else if (flushed.status === 'timeout') {
        config.onBackgroundError(
          new AgentError({
            code: 'STORAGE_ERROR',
            message: `saving the session at close did not finish within ${config.toolTimeoutMs}ms; events not yet saved are lost`,
          }),
        );
      }
    } finally {
      await this.release();
    }
  }

  private async extractAtClose(): Promise<void> {
    const { config, memory, models } = this.runtime;
    if (memory === undefined) return;
    const state = this.state;
    const route = config.memoryModel === undefined ? state.model : models.resolve(config.memoryModel);
    const messages = state.sinceCheckpoint;
    state.sinceCheckpoint = [];
    // The extraction is bounded so that close() and shutdown() never hang on a model that does not answer,
    // even one that ignores its signal.
    const controller = new AbortController();
    const settled = await settleWithin(
      memory.extract({
        messages,
        provider: observedProvider(this.runtime.observers.enabledNow(), route.provider, {
          sessionId: state.id,
        }),
        modelId: route.info.id,
        sessionId: state.id,
        signal: controller.signal,
        // Outside any turn there is no event stream: the call counts in the session's totals and its log.
        onUsage: state.usage.sink({ log: state.log, priceOf: this.priceOf }),
      }),
      config.toolTimeoutMs,
    );
    if (settled.status === 'timeout') {
      controller.abort();
      config.onBackgroundError(
        new AgentError({
          code: 'MEMORY_ERROR',
          message: `memory extraction at close did not finish within ${config.toolTimeoutMs}ms and was abandoned`,
        }),
      );
    } else if (settled.status === 'rejected') {
      config.onBackgroundError(
        toAgentError(settled.error, 'MEMORY_ERROR', 'memory extraction at close failed'),
      );
    }
  }

  /**
   * Releases the storage's claim on the session (bounded by the tool timeout, so close never hangs on it),
   * then frees the agent's slot: once close() resolves, other processes can have the session. Never rejects.
   */
  private async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await releaseSessionClaim({
      claim: this.state.claim,
      sessionId: this.state.id,
      config: this.runtime.config,
    });
    this.slot.release(this);
  }
}

/** Releases a storage's claim on a session, bounded by the tool timeout; a failure goes to onBackgroundError. */
export async function releaseSessionClaim(options: {
  claim: SessionClaim | undefined;
  sessionId: string;
  config: ResolvedConfig;
}): Promise<void> {
  const { claim, sessionId, config } = options;
  if (claim === undefined) return;
  const outcome = await settleWithin(claim.release(), config.toolTimeoutMs);
  if (outcome.status === 'rejected') {
    config.onBackgroundError(
      toAgentError(outcome.error, 'STORAGE_ERROR', `releasing the claim on session '${sessionId}' failed`),
    );
  }
}

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
  async close(): Promise<void> {
    abandonedSessions.unregister(this.controller);
    await this.controller.close({ cancelRunning: false });
  }

  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
