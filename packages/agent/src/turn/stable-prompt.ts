import type { ResolvedConfig } from '../kernel/config.js';
import type { PluginDescriptor } from '../kernel/types.js';
import { buildStablePrompt } from '../prompt/index.js';
import type { SkillManager } from '../skills/skill.js';
import type { AgentRuntime, SessionState } from './session-state.js';

/** The stable prompt of an agent's sessions without an override, with the parts it was built from. */
interface SharedStablePrompt {
  skills: SkillManager;
  plugins: readonly PluginDescriptor[];
  prompt: string;
}

/**
 * By the agent's config. Instructions, personality, skills and plugins are fixed once an agent is built, so every
 * session without an override of its prompt has the same stable part: it is built once per agent, not once per
 * session (a host that opens a session per request would otherwise rebuild it for each). The skills and plugins
 * are compared too, in case a runtime pairs one config with others.
 */
const sharedPrompts = new WeakMap<ResolvedConfig, SharedStablePrompt>();

/** The stable part of the system prompt, built once and cached until the next compaction. */
export function cachedStablePrompt(runtime: AgentRuntime, session: SessionState): string {
  const cached = session.context.stablePrompt;
  if (cached !== undefined) return cached;
  const built =
    session.systemPromptOverride === undefined ? sharedStablePrompt(runtime) : buildFor(runtime, session);
  session.context.stablePrompt = built;
  return built;
}

function sharedStablePrompt(runtime: AgentRuntime): string {
  const { config, skills, plugins } = runtime;
  const shared = sharedPrompts.get(config);
  if (shared !== undefined && shared.skills === skills && shared.plugins === plugins) return shared.prompt;
  const prompt = buildFor(runtime, undefined);
  sharedPrompts.set(config, { skills, plugins, prompt });
  return prompt;
}

function buildFor(runtime: AgentRuntime, session: SessionState | undefined): string {
  return buildStablePrompt({
    systemInstructions: runtime.config.systemInstructions,
    systemPromptOverride: session?.systemPromptOverride,
    personality: runtime.config.personality,
    implicitSkills: runtime.skills.implicitSkills(),
    plugins: runtime.plugins,
  });
}
