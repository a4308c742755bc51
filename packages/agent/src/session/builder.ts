import { HookRegistry } from '../hooks/hook.js';
import { PluginManager } from '../hooks/plugin-manager.js';
import { type AgentConfig, resolveConfig, type SkillDefinition } from '../kernel/config.js';
import { AgentError, invalidConfig } from '../kernel/error.js';
import { MemoryManager } from '../memory/memory.js';
import { ModelRouter } from '../model/model-router.js';
import { ObserverRegistry } from '../model/observation.js';
import type { ModelProvider } from '../ports/model.js';
import type { Plugin } from '../ports/plugin.js';
import type { MemoryStorage, SessionStorage } from '../ports/storage.js';
import type { ToolHandler } from '../ports/tool.js';
import { ACTIVATE_SKILL_TOOL_NAME, SkillManager, validateSkills } from '../skills/skill.js';
import { ToolDispatcher } from '../tools/tool-dispatch.js';
import { type AgentRuntime, TurnLinks } from '../turn/session-state.js';
import { bindAgentTools } from '../turn/subagent.js';
import { runTurn } from '../turn/turn.js';
import { pricingProblem } from '../usage/usage.js';
import { Agent } from './agent.js';

declare const builderState: unique symbol;
/** Builder state before any model provider is registered: `build()` is a type error. */
export interface NoProvider {
  readonly [builderState]: 'no-provider';
}
/** Builder state once a model provider is registered. */
export interface HasProvider {
  readonly [builderState]: 'has-provider';
}

/** Tool names the model APIs accept. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

function conflict(kind: string, name: string): AgentError {
  return new AgentError({ code: 'NAME_CONFLICT', message: `${kind} '${name}' is registered more than once` });
}

/**
 * Collects the agent's parts and validates them in `build()` (0006 §6, SPEC §4 "Build validation").
 * The type parameter makes `build()` a compile error until a model provider is registered.
 */
export class AgentBuilder<State extends NoProvider | HasProvider = NoProvider> {
  declare private readonly state: State;
  private readonly config: AgentConfig;
  private readonly providers: ModelProvider[] = [];
  private readonly tools: ToolHandler[] = [];
  private readonly skills: SkillDefinition[] = [];
  private readonly plugins: { plugin: Plugin; config: unknown }[] = [];
  private readonly sessionStorages: SessionStorage[] = [];
  private readonly memoryStorages: MemoryStorage[] = [];

  /** Starts a builder; the config is checked by `build()`. */
  constructor(config: AgentConfig) {
    this.config = config;
  }

  /** Adds a model provider; its models become available by id. */
  registerModelProvider(provider: ModelProvider): AgentBuilder<HasProvider> {
    this.providers.push(provider);
    return this as unknown as AgentBuilder<HasProvider>;
  }

  /** Adds a tool the model can call. */
  registerTool(tool: ToolHandler): this {
    this.tools.push(tool);
    return this;
  }

  /** Adds a skill, invoked as `/name` or, when allowed, activated by the model. */
  registerSkill(skill: SkillDefinition): this {
    this.skills.push(skill);
    return this;
  }

  /** Adds a plugin; `config` is handed to its `initialize` and to its hook handlers. */
  registerPlugin(plugin: Plugin, pluginConfig?: unknown): this {
    this.plugins.push({ plugin, config: pluginConfig });
    return this;
  }

  /** Sets where sessions are persisted; without one, sessions live in memory only. */
  registerSessionStorage(storage: SessionStorage): this {
    this.sessionStorages.push(storage);
    return this;
  }

  /** Sets where long-term memories are kept; without one, memory is off. */
  registerMemoryStorage(storage: MemoryStorage): this {
    this.memoryStorages.push(storage);
    return this;
  }

  /** Validates everything, initialises the plugins in order and returns the Agent. Rejects with AgentError. */
  async build(this: AgentBuilder<HasProvider>): Promise<Agent> {
    const self = this as unknown as AgentBuilder<NoProvider | HasProvider>;
    return self.buildAgent();
  }

  private async buildAgent(): Promise<Agent> {
    if (this.providers.length === 0) {
      throw new AgentError({
        code: 'NO_MODEL_PROVIDER',
        message: 'register at least one model provider before build()',
      });
    }
    const config = resolveConfig(this.config);
    const models = this.validateProviders();
    if (!models.has(config.defaultModel)) {
      throw new AgentError({
        code: 'INVALID_DEFAULT_MODEL',
        message: `defaultModel '${config.defaultModel}' is not offered by any registered provider`,
      });
    }
    for (const [field, modelId] of [
      ['compactModel', config.compactModel],
      ['memoryModel', config.memoryModel],
    ] as const) {
      if (modelId !== undefined && !models.has(modelId)) {
        throw invalidConfig(`${field} '${modelId}' is not offered by any registered provider`);
      }
    }
    for (const modelId of config.fallbackModels) {
      if (!models.has(modelId)) {
        throw invalidConfig(`fallbackModels: '${modelId}' is not offered by any registered provider`);
      }
    }
    const toolNames = this.validateTools();
    validateSkills({ skills: this.skills, toolNames });
    this.validatePlugins();
    if (this.sessionStorages.length > 1) {
      throw new AgentError({
        code: 'STORAGE_DUPLICATE',
        message: 'a session storage is registered more than once',
      });
    }
    if (this.memoryStorages.length > 1) {
      throw new AgentError({
        code: 'STORAGE_DUPLICATE',
        message: 'a memory storage is registered more than once',
      });
    }

    const skills = new SkillManager(this.skills);
    const activateSkill = skills.createActivateSkillTool();
    // Sub-agent tools reach the runtime they run in once it is made, below.
    let runtime: AgentRuntime | undefined;
    const dispatcherOf = (handlers: readonly ToolHandler[]): ToolDispatcher => {
      const bound = bindAgentTools({
        tools: [...handlers],
        models,
        runtime: () => runtime as AgentRuntime,
        runTurn,
      });
      return new ToolDispatcher({
        tools: activateSkill === undefined ? bound : [...bound, activateSkill],
        timeoutMs: config.toolTimeoutMs,
      });
    };
    const tools = dispatcherOf(this.tools);
    const skillDefinitions = [...this.skills];
    // What `Agent.replaceTools` checks and compiles new tools with, as build() did the first ones.
    // The runtime of `Agent.replaceTools`: new tools checked as build() checked the first ones, the rest shared.
    // Sub-agent tools (of either tool set) reach the newest runtime, as they reach its tools.
    const withTools = (handlers: readonly ToolHandler[]): AgentRuntime => {
      validateSkills({ skills: skillDefinitions, toolNames: this.validateTools(handlers) });
      const replaced = dispatcherOf(handlers);
      runtime = {
        ...(runtime as AgentRuntime),
        tools: replaced,
        toolsChars: JSON.stringify(replaced.specs).length,
      };
      return runtime;
    };
    const hooks = new HookRegistry();
    const observers = new ObserverRegistry(config.onBackgroundError);
    const pluginManager = new PluginManager({
      plugins: this.plugins,
      hooks,
      observers,
      timeoutMs: config.toolTimeoutMs,
      onBackgroundError: config.onBackgroundError,
    });
    await pluginManager.initializeAll();
    const memoryStorage = this.memoryStorages[0];
    runtime = {
      config,
      hooks,
      observers,
      tools,
      toolsChars: JSON.stringify(tools.specs).length,
      skills,
      plugins: pluginManager.descriptors,
      models: new ModelRouter(this.providers),
      memory:
        memoryStorage === undefined
          ? undefined
          : new MemoryManager({
              storage: memoryStorage,
              namespace: config.memoryNamespace,
              maxItems: config.memoryMaxItems,
            }),
      sessionStorage: this.sessionStorages[0],
      turns: new TurnLinks(),
    };
    return new Agent({ pluginManager, runtime, withTools });
  }

  private validateProviders(): Set<string> {
    const providerIds = new Set<string>();
    const modelIds = new Set<string>();
    for (const provider of this.providers) {
      if (typeof provider !== 'object' || provider === null || typeof provider.chat !== 'function') {
        throw invalidConfig('a model provider must be an object with a chat() method');
      }
      if (typeof provider.id !== 'string' || provider.id === '')
        throw invalidConfig('a model provider has no id');
      if (providerIds.has(provider.id)) throw conflict('model provider', provider.id);
      providerIds.add(provider.id);
      if (!Array.isArray(provider.models))
        throw invalidConfig(`provider '${provider.id}' has no models array`);
      for (const model of provider.models) {
        if (typeof model?.id !== 'string' || model.id === '') {
          throw invalidConfig(`provider '${provider.id}' offers a model without an id`);
        }
        if (!Number.isInteger(model.contextWindow) || model.contextWindow <= 0) {
          throw invalidConfig(`model '${model.id}' needs a positive integer contextWindow`);
        }
        if (typeof model.capabilities !== 'object' || model.capabilities === null) {
          throw invalidConfig(`model '${model.id}' needs capabilities { toolUse, vision, streaming }`);
        }
        const pricing = pricingProblem((model as { pricing?: unknown }).pricing);
        if (pricing !== undefined) throw invalidConfig(`model '${model.id}': ${pricing}`);
        const structured: unknown = model.capabilities.structuredOutput;
        if (structured !== undefined && typeof structured !== 'boolean') {
          throw invalidConfig(
            `model '${model.id}': capabilities.structuredOutput must be a boolean when given`,
          );
        }
        if (modelIds.has(model.id)) throw conflict('model', model.id);
        modelIds.add(model.id);
      }
    }
    return modelIds;
  }

  /** Checks the tools' names and shapes (the registered ones, or a set for `Agent.replaceTools`). */
  private validateTools(tools: readonly ToolHandler[] = this.tools): Set<string> {
    const names = new Set<string>();
    for (const tool of tools) {
      if (typeof tool !== 'object' || tool === null || typeof tool.execute !== 'function') {
        throw invalidConfig('a tool must be an object with an execute() method');
      }
      if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) {
        throw invalidConfig(`tool name ${JSON.stringify(tool.name)} must match ${TOOL_NAME_PATTERN}`);
      }
      if (tool.name === ACTIVATE_SKILL_TOOL_NAME) {
        throw new AgentError({
          code: 'NAME_CONFLICT',
          message: `the tool name '${ACTIVATE_SKILL_TOOL_NAME}' is reserved for the runtime's skill activation`,
        });
      }
      if (names.has(tool.name)) throw conflict('tool', tool.name);
      if (typeof tool.description !== 'string')
        throw invalidConfig(`tool '${tool.name}' needs a description`);
      if (typeof tool.isMutating !== 'boolean')
        throw invalidConfig(`tool '${tool.name}' needs a boolean isMutating`);
      names.add(tool.name);
    }
    return names;
  }

  private validatePlugins(): void {
    const ids = new Set<string>();
    for (const { plugin } of this.plugins) {
      if (
        typeof plugin !== 'object' ||
        plugin === null ||
        typeof plugin.initialize !== 'function' ||
        typeof plugin.apply !== 'function' ||
        typeof plugin.shutdown !== 'function'
      ) {
        throw invalidConfig('a plugin must be an object with initialize(), apply() and shutdown()');
      }
      if (typeof plugin.id !== 'string' || plugin.id === '') throw invalidConfig('a plugin has no id');
      if (ids.has(plugin.id)) throw conflict('plugin', plugin.id);
      ids.add(plugin.id);
    }
  }
}
