import type { InterruptedTurnRecord } from '../approvals/interrupted-turn.js';
import { ContextManager, logPayloadOf } from '../context/context.js';
import type { HookRegistry } from '../hooks/hook.js';
import type { HeldBatch } from '../kernel/approval-types.js';
import type { ResolvedConfig } from '../kernel/config.js';
import type { AgentEvent, AgentEventPayload } from '../kernel/event.js';
import type { BudgetConfig, Message, PluginDescriptor, UsageTotals } from '../kernel/types.js';
import { SessionLog } from '../log/session-log.js';
import type { MemoryManager } from '../memory/memory.js';
import type { ModelRouter, RoutedModel } from '../model/model-router.js';
import type { ObserverRegistry } from '../model/observation.js';
import type { Memory, SessionClaim, SessionStorage } from '../ports/storage.js';
import type { SkillManager } from '../skills/skill.js';
import type { ToolDispatcher } from '../tools/tool-dispatch.js';
import type { BudgetGate } from '../usage/budget.js';
import { emptyUsageTotals, SessionUsage } from '../usage/usage.js';

/**
 * Everything the agent holds for its sessions; immutable after build. `Agent.replaceTools` makes a new runtime
 * (sharing all but the tools), so a turn keeps the one it started with without copying it.
 */
export interface AgentRuntime {
  readonly config: ResolvedConfig;
  readonly hooks: HookRegistry;
  /** The plugins' observers (PluginContext.observe). */
  readonly observers: ObserverRegistry;
  readonly tools: ToolDispatcher;
  /** Characters of the tool specs as JSON, for the token estimate (measured when the tools are set). */
  readonly toolsChars: number;
  readonly skills: SkillManager;
  readonly plugins: readonly PluginDescriptor[];
  readonly models: ModelRouter;
  readonly memory: MemoryManager | undefined;
  readonly sessionStorage: SessionStorage | undefined;
  /** The turns running now, for the sub-agent tools they call. */
  readonly turns: TurnLinks;
}

/**
 * The state of one session (0006 §8 SessionState), and the owner of its invariants: a message enters the
 * context, the messages since the memory checkpoint and the log together (`commit`); the turn count follows the
 * user messages as replaying the log counts them; every event of the session gets the next sequence number.
 */
export class SessionState {
  readonly id: string;
  readonly model: RoutedModel;
  readonly systemPromptOverride: string | undefined;
  /** The session's own budgets (its SessionConfig's); the agent's apply where it sets none. */
  readonly budget: BudgetConfig | undefined;
  /** The session's own fallback models; the agent's apply when unset. */
  readonly fallbackModels: readonly string[] | undefined;
  /**
   * With `fallbackSticky`, the fallback model that answered the session's last call: its next calls go there
   * first. Not saved: a resumed session starts on its own model.
   */
  stickyModel: string | undefined = undefined;
  readonly context = new ContextManager();
  readonly log: SessionLog;
  /** The storage's claim on the session, released at close; undefined when the storage makes none. */
  readonly claim: SessionClaim | undefined;
  /** The session's memories (the runtime's, on the session's namespace); undefined without a memory storage. */
  readonly memory: MemoryManager | undefined;
  /** The session's running usage totals (restored from the log on resume). */
  readonly usage = new SessionUsage();
  /** The memories the prompt shows (loaded at start, reloaded after each checkpoint). */
  memories: Memory[] = [];
  /** The tool batch a suspended turn holds until its calls are decided and the turn continued. */
  heldBatch: HeldBatch | undefined;
  /**
   * A turn a crash cut, found at resume, until it is continued or given up (a new message): what it left
   * unfinished, and the context it continues from (its unfinished calls open, its cut answer left out).
   */
  interrupted: { record: InterruptedTurnRecord; messages: Message[]; chars: number } | undefined;
  #turnCount = 0;
  #turnsSinceCheckpoint = 0;
  #sinceCheckpoint: Message[] = [];
  #nextSequence = 0;

  /** A session before any of its events is replayed or saved: a new session, a resumed or a sub-agent's one. */
  constructor(options: {
    runtime: AgentRuntime;
    sessionId: string;
    model: RoutedModel;
    systemPromptOverride: string | undefined;
    claim: SessionClaim | undefined;
    /** The session's own memory namespace; default the agent's. */
    memoryNamespace?: string | undefined;
    budget?: BudgetConfig | undefined;
    fallbackModels?: readonly string[] | undefined;
  }) {
    this.budget = options.budget;
    this.fallbackModels = options.fallbackModels;
    this.id = options.sessionId;
    this.model = options.model;
    this.systemPromptOverride = options.systemPromptOverride;
    this.log = new SessionLog({ storage: options.runtime.sessionStorage, sessionId: options.sessionId });
    this.claim = options.claim;
    const memory = options.runtime.memory;
    this.memory =
      options.memoryNamespace === undefined ? memory : memory?.inNamespace(options.memoryNamespace);
  }

  /** Turns whose user message entered the context (steered messages included, as a replay counts them). */
  get turnCount(): number {
    return this.#turnCount;
  }

  /** True when messages entered since the last memory checkpoint (or since the resume); false without memory. */
  get hasUncheckpointed(): boolean {
    return this.#sinceCheckpoint.length > 0;
  }

  /**
   * Adds a message to the context and saves it as it enters (write-ahead, SPEC §4); `turnId` for the messages
   * that open a turn (its input and the system messages injected before it), so that rewinds find the turn.
   */
  commit(message: Message, turnId?: string): Promise<void> {
    this.#enter(message, turnId);
    return this.log.append(logPayloadOf(message, turnId));
  }

  /** Adds a message derived from the log and not saved (replaying the log adds it at the same place). */
  addDerived(message: Message): void {
    this.#enter(message);
  }

  /**
   * Counts a user message that entered the context: a turn's own input counts toward the memory checkpoint too,
   * a steered one only as a turn (a user message in the log counts as a turn when it is replayed).
   */
  countTurn(kind: 'input' | 'steered'): void {
    this.#turnCount += 1;
    if (kind === 'input') this.#turnsSinceCheckpoint += 1;
  }

  /** The counts a resumed session starts from: those of its replayed log. */
  restoreCounts(turnCount: number, checkpointInterval: number): void {
    this.#turnCount = turnCount;
    this.#turnsSinceCheckpoint = checkpointInterval > 0 ? turnCount % checkpointInterval : 0;
  }

  /** True when `interval` turns (at least one) have run since the last memory checkpoint. */
  checkpointDue(interval: number): boolean {
    return interval !== 0 && this.#turnsSinceCheckpoint >= interval;
  }

  /** Takes the messages since the last checkpoint for an extraction: the count starts again from zero. */
  takeSinceCheckpoint(): Message[] {
    const messages = this.#sinceCheckpoint;
    this.#sinceCheckpoint = [];
    this.#turnsSinceCheckpoint = 0;
    return messages;
  }

  /** Gives back the messages of an extraction that failed, before those that came meanwhile. */
  returnSinceCheckpoint(messages: readonly Message[]): void {
    this.#sinceCheckpoint = [...messages, ...this.#sinceCheckpoint];
  }

  /** The session's next event: stamped now, with the next sequence number (strictly increasing, across turns). */
  nextEvent(turnId: string, payload: AgentEventPayload): AgentEvent {
    return { sessionId: this.id, turnId, timestamp: new Date(), sequence: this.#nextSequence++, payload };
  }

  /**
   * Cuts the context before the turn `turnId` (see `ContextManager.rewindTo`); the messages it drops are no
   * longer waiting for the memory checkpoint either. False when the turn is not in the context.
   */
  rewindTo(turnId: string): boolean {
    const before = this.context.messages;
    if (!this.context.rewindTo(turnId)) return false;
    const dropped = new Set(before.slice(this.context.messages.length));
    this.#sinceCheckpoint = this.#sinceCheckpoint.filter((message) => !dropped.has(message));
    return true;
  }

  #enter(message: Message, turnId?: string): void {
    this.context.push(message, turnId);
    // Only a memory extraction reads them: without memory, keeping them would hold every message a compaction
    // dropped from the context for as long as the session lives.
    if (this.memory !== undefined) this.#sinceCheckpoint.push(message);
  }
}

/** One running turn, as its sub-agents see it. */
interface TurnLink {
  readonly sessionId: string;
  /** 0 for a turn of a session the host opened; a sub-agent's turn is one deeper than its caller's. */
  readonly depth: number;
  readonly emit: (payload: AgentEventPayload) => void;
  readonly log: SessionLog;
  /** The session's model: a sub-agent without a model of its own runs on it. */
  readonly model: RoutedModel;
  /** The budget gate of the turn: its sub-agents' calls count against it too. */
  readonly budgetGate?: BudgetGate | undefined;
  /** What the sub-agents this turn called have used, theirs included (filled as each one ends). */
  readonly subagentUsage: UsageTotals;
}

/**
 * The turns running on an agent, by turn id: what a sub-agent tool needs of the turn that called it (its event
 * stream, its log, its model, its depth) and where its sub-agents' usage is summed. A tool only gets the turn id
 * in its ToolInput; this registry is how the runtime's own sub-agent tool finds the rest.
 */
export class TurnLinks {
  readonly #links = new Map<string, TurnLink>();

  /** Registers a turn for as long as it runs (until `close`). */
  open(turnId: string, link: Omit<TurnLink, 'subagentUsage'>): TurnLink {
    // Written out, not spread: one object of a fixed shape per turn.
    const full: TurnLink = {
      sessionId: link.sessionId,
      depth: link.depth,
      emit: link.emit,
      log: link.log,
      model: link.model,
      budgetGate: link.budgetGate,
      subagentUsage: emptyUsageTotals(),
    };
    this.#links.set(turnId, full);
    return full;
  }

  /** Removes a turn that has ended. */
  close(turnId: string): void {
    this.#links.delete(turnId);
  }

  /** The running turn of this id, if any. */
  get(turnId: string): TurnLink | undefined {
    return this.#links.get(turnId);
  }
}
