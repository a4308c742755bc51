import type { HeldBatch } from './approval-types.js';
import type { ResolvedConfig } from './config.js';
import type { ContextManager } from './context.js';
import { AgentError } from './error.js';
import type { HookRegistry } from './hook.js';
import type { MemoryManager } from './memory.js';
import type { PluginDescriptor } from './plugin-manager.js';
import type { ModelInfo, ModelProvider } from './ports/model.js';
import type { Memory, SessionClaim, SessionStorage } from './ports/storage.js';
import type { SessionLog } from './session-log.js';
import type { SkillManager } from './skill.js';
import type { ToolDispatcher } from './tool-dispatch.js';
import type { Message } from './types.js';

/** A model and the provider that serves it. */
export interface RoutedModel {
  provider: ModelProvider;
  info: ModelInfo;
}

/** Finds the provider of a model id (0006 §7.1). */
export class ModelRouter {
  private readonly routes = new Map<string, RoutedModel>();

  /** Indexes every model of the providers; the builder has already rejected duplicates. */
  constructor(providers: readonly ModelProvider[]) {
    for (const provider of providers) {
      for (const info of provider.models) this.routes.set(info.id, { provider, info });
    }
  }

  /** The route of a model id, or undefined. */
  find(modelId: string): RoutedModel | undefined {
    return this.routes.get(modelId);
  }

  /** The route of a model id; throws MODEL_NOT_SUPPORTED. */
  resolve(modelId: string): RoutedModel {
    const route = this.routes.get(modelId);
    if (route === undefined) {
      throw new AgentError({
        code: 'MODEL_NOT_SUPPORTED',
        message: `model '${modelId}' is not offered by any registered provider`,
      });
    }
    return route;
  }
}

/** Everything the agent holds for its sessions; immutable after build. */
export interface AgentRuntime {
  readonly config: ResolvedConfig;
  readonly hooks: HookRegistry;
  readonly tools: ToolDispatcher;
  /** Characters of the tool specs as JSON, for the token estimate (measured once). */
  readonly toolsChars: number;
  readonly skills: SkillManager;
  readonly plugins: readonly PluginDescriptor[];
  readonly models: ModelRouter;
  readonly memory: MemoryManager | undefined;
  readonly sessionStorage: SessionStorage | undefined;
}

/** The mutable state of one session (0006 §8 SessionState). */
export interface SessionState {
  readonly id: string;
  readonly model: RoutedModel;
  readonly systemPromptOverride: string | undefined;
  readonly context: ContextManager;
  readonly log: SessionLog;
  /** The storage's claim on the session, released at close; undefined when the storage makes none. */
  readonly claim: SessionClaim | undefined;
  memories: Memory[];
  /** Turns whose user message entered the context. */
  turnCount: number;
  /** Turns since the last memory checkpoint. */
  turnsSinceCheckpoint: number;
  /** Messages since the last memory checkpoint (or since the resume). */
  sinceCheckpoint: Message[];
  /** The next event's sequence number. */
  nextSequence: number;
  /** The tool batch a suspended turn holds until its calls are decided and the turn continued. */
  heldBatch?: HeldBatch | undefined;
}
