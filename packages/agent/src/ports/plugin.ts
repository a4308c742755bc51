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
}

/** A plugin: initialised once at build, then `apply` taps hooks; shut down in reverse order. */
export interface Plugin {
  readonly id: string;
  readonly displayName: string;
  readonly description: string;
  initialize(config: unknown): Promise<void>;
  apply(ctx: PluginContext): void;
  shutdown(): Promise<void>;
}
