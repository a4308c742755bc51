import type { AgentError } from '../kernel/error.js';
import type { AgentEvent } from '../kernel/event.js';
import type { ContentBlock, TokenUsage } from '../kernel/types.js';
import type { ChatEvent, ChatPurpose, ChatRequest } from './model.js';

/** The points of a session's life where plugins can run code. */
export type HookEvent =
  | 'SessionStart'
  | 'SessionEnd'
  | 'TurnStart'
  | 'TurnEnd'
  | 'BeforeToolUse'
  | 'AfterToolUse'
  | 'BeforeCompact';

/** What a hook handler receives; `data` depends on the event (see the README's hook table). */
export interface HookPayload {
  event: HookEvent;
  sessionId: string;
  turnId?: string;
  pluginConfig: unknown;
  data: unknown;
  timestamp: Date;
}

/** A handler's answer: go on, go on with changed `data`, or stop the chain (and the action, where the event allows). */
export type HookResult =
  | { type: 'continue' }
  | { type: 'continue_with'; data: unknown }
  | { type: 'abort'; reason: string };

/**
 * A hook handler; returning nothing means `continue`. A throw counts as `continue` and is reported; so does a
 * time-out, unless the handler was tapped with `onTimeout: 'abort'`.
 */
export type HookHandler = (payload: HookPayload) => HookResult | undefined | Promise<HookResult | undefined>;

/**
 * How a handler is tapped. `onTimeout: 'abort'` makes a handler that does not answer in time stop the chain
 * (and the action, as an `abort` answer would) instead of counting as `continue`: a gate such as an approval
 * then fails closed.
 */
export interface HookTapOptions {
  onTimeout?: 'continue' | 'abort';
}

/** What `Plugin.apply` receives: the plugin's id and config, and `tap` to register handlers. */
export interface PluginContext {
  readonly pluginId: string;
  readonly pluginConfig: unknown;
  /** Registers a handler, run in registration order; returns a function that removes it. */
  tap(event: HookEvent, handler: HookHandler, options?: HookTapOptions): () => void;
  /**
   * Registers an observer of every session's turns, events and model calls; returns a function that removes
   * it. Observers only watch: they are called synchronously, cannot change or stop anything, and one that
   * throws is reported to `onBackgroundError` (PLUGIN_ERROR) while the turn goes on.
   */
  observe(observer: Observer, options?: ObserveOptions): () => void;
}

/** How an observer is registered. */
export interface ObserveOptions {
  /**
   * Asked once when a turn starts (and when a model call outside a turn starts): false means the observer sees
   * nothing of that turn. A turn that no observer wants pays nothing for observation. A throw counts as false
   * and is reported. Default: always observe.
   */
  enabled?: () => boolean;
}

/** Receives each observation as it happens; its return value is ignored (a rejected promise is reported). */
export type Observer = (observation: Observation) => unknown;

/** How a model call ended: its stream finished, it failed, or it was stopped (cancelled) before its end. */
export type ModelCallOutcome = 'completed' | 'failed' | 'cancelled';

/** What an observer sees (the README's "Observing" section lists when each comes). */
export type Observation =
  | {
      type: 'turn_start';
      sessionId: string;
      turnId: string;
      /** The provider and model of the session. */
      providerId: string;
      modelId: string;
      /** The user's input as the turn received it (user data: an observer shows it only when its host agrees). */
      input: readonly ContentBlock[];
    }
  /** Every AgentEvent of every turn, as the caller reads it, in order. */
  | { type: 'agent_event'; event: AgentEvent }
  | {
      type: 'turn_end';
      sessionId: string;
      turnId: string;
      status: 'completed' | 'cancelled' | 'failed' | 'suspended';
    }
  | {
      type: 'model_call_start';
      /** Unique within the agent; pairs the start with its end. */
      callId: string;
      sessionId: string;
      /** Unset for a call outside a turn (memory extraction at close). */
      turnId?: string;
      purpose: ChatPurpose;
      providerId: string;
      /** The model id requested. */
      modelId: string;
      /** The request as sent (holds user data). */
      request: Readonly<ChatRequest>;
    }
  | {
      type: 'model_call_end';
      callId: string;
      sessionId: string;
      turnId?: string;
      purpose: ChatPurpose;
      providerId: string;
      modelId: string;
      outcome: ModelCallOutcome;
      /** The `done` event's stop reason, when the stream sent one. */
      stopReason?: Extract<ChatEvent, { type: 'done' }>['stopReason'];
      /** The last `usage` event of the stream, when it sent one. */
      usage?: TokenUsage;
      /** The model that answered, as the provider reported it on `done` (`ChatEvent`); unset when it did not. */
      responseModel?: string;
      /** Why the call failed (outcome `failed`). */
      error?: AgentError;
      /** The answer's text as streamed (holds model output). */
      outputText: string;
      /** The tool calls the answer asked for; `arguments` is the raw JSON text the model sent. */
      toolCalls: readonly { callId: string; toolName: string; arguments: string }[];
    };

/** A plugin: initialised once at build, then `apply` taps hooks; shut down in reverse order. */
export interface Plugin {
  readonly id: string;
  readonly displayName: string;
  readonly description: string;
  initialize(config: unknown): Promise<void>;
  apply(ctx: PluginContext): void;
  shutdown(): Promise<void>;
}
