import { buildStablePrompt } from '../prompt/index.js';
import type { AgentRuntime, SessionState } from './session-state.js';

/** The stable part of the system prompt, built once and cached until the next compaction. */
export function cachedStablePrompt(runtime: AgentRuntime, session: SessionState): string {
  const cached = session.context.stablePrompt;
  if (cached !== undefined) return cached;
  const built = buildStablePrompt({
    systemInstructions: runtime.config.systemInstructions,
    systemPromptOverride: session.systemPromptOverride,
    personality: runtime.config.personality,
    implicitSkills: runtime.skills.implicitSkills(),
    plugins: runtime.plugins,
  });
  session.context.stablePrompt = built;
  return built;
}
