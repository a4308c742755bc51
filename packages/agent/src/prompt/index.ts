import type { EnvironmentContext, Personality, SkillDefinition } from '../kernel/config.js';
import {
  MEMORY_INSTRUCTIONS,
  PLUGIN_SECTION_HEADER,
  SKILL_SECTION_HEADER,
  SKILL_USAGE_RULES,
} from '../kernel/templates.js';
import type { Message, PluginDescriptor } from '../kernel/types.js';
import type { Memory } from '../ports/storage.js';

/** Parts of a system prompt are separated by one blank line. */
const PART_SEPARATOR = '\n\n';

function isBlank(text: string): boolean {
  return text.trim() === '';
}

/** Keeps one list entry on one line whatever white space its text holds. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function joinParts(parts: readonly string[]): string {
  return parts.filter((part) => !isBlank(part)).join(PART_SEPARATOR);
}

function renderInstructions(instructions: readonly string[]): string {
  const texts = instructions.filter((text) => !isBlank(text));
  if (texts.length === 0) return '';
  return `<system_instructions>\n${texts.join(PART_SEPARATOR)}\n</system_instructions>`;
}

function renderPersonality(personality: Personality | undefined): string {
  if (personality === undefined) return '';
  const lines: string[] = [];
  if (personality.name !== undefined && !isBlank(personality.name))
    lines.push(`<name>${personality.name}</name>`);
  if (!isBlank(personality.description)) lines.push(personality.description);
  if (lines.length === 0) return '';
  return `<personality>\n${lines.join('\n')}\n</personality>`;
}

function renderSkills(skills: readonly SkillDefinition[]): string {
  if (skills.length === 0) return '';
  const lines = skills.map((skill) => `- ${skill.name}: ${oneLine(skill.description)}`);
  return `${SKILL_SECTION_HEADER}\n${lines.join('\n')}${PART_SEPARATOR}${SKILL_USAGE_RULES}`;
}

function renderPlugins(plugins: readonly PluginDescriptor[]): string {
  if (plugins.length === 0) return '';
  const lines = plugins.map(
    (plugin) => `- ${oneLine(plugin.displayName)} (${plugin.id}): ${oneLine(plugin.description)}`,
  );
  return `${PLUGIN_SECTION_HEADER}\n${lines.join('\n')}`;
}

function renderMemories(memories: readonly Memory[]): string {
  const lines = memories
    .filter((memory) => !isBlank(memory.content))
    .map((memory) => {
      const category =
        memory.category === undefined || isBlank(memory.category) ? '' : `[${memory.category}] `;
      return `- ${category}${oneLine(memory.content)}`;
    });
  if (lines.length === 0) return '';
  return `${MEMORY_INSTRUCTIONS}${PART_SEPARATOR}${lines.join('\n')}`;
}

function renderEnvironment(context: EnvironmentContext | undefined): string {
  if (context === undefined) return '';
  const fields: [string, string | undefined][] = [
    ['cwd', context.cwd],
    ['platform', context.platform],
    ['shell', context.shell],
    ['date', context.date],
    ['timezone', context.timezone],
    ...Object.entries(context.extra ?? {}),
  ];
  const lines = fields
    .filter((field): field is [string, string] => typeof field[1] === 'string' && !isBlank(field[1]))
    .map(([key, value]) => `${key}: ${value}`);
  if (lines.length === 0) return '';
  return `<environment_context>\n${lines.join('\n')}\n</environment_context>`;
}

/**
 * The stable, cacheable part of the system prompt: system instructions (with the session's override after
 * them), personality, the skills the model may activate, the active plugins. Empty parts are left out.
 */
export function buildStablePrompt(options: {
  systemInstructions: readonly string[];
  systemPromptOverride?: string | undefined;
  personality?: Personality | undefined;
  implicitSkills: readonly SkillDefinition[];
  plugins: readonly PluginDescriptor[];
}): string {
  const instructions =
    options.systemPromptOverride === undefined
      ? options.systemInstructions
      : [...options.systemInstructions, options.systemPromptOverride];
  return joinParts([
    renderInstructions(instructions),
    renderPersonality(options.personality),
    renderSkills(options.implicitSkills),
    renderPlugins(options.plugins),
  ]);
}

/**
 * The part of the system prompt rebuilt every turn: memories (in the order given), the environment context,
 * then the sections TurnStart hooks added, each as is. Empty parts are left out.
 */
export function buildDynamicPrompt(options: {
  memories: readonly Memory[];
  environmentContext?: EnvironmentContext | undefined;
  dynamicSections: readonly string[];
}): string {
  // Rebuilt before every model call: the common case of nothing at all is answered without building anything.
  if (
    options.memories.length === 0 &&
    options.environmentContext === undefined &&
    options.dynamicSections.length === 0
  ) {
    return '';
  }
  return joinParts([
    renderMemories(options.memories),
    renderEnvironment(options.environmentContext),
    // A TurnStart hook may hand back anything; only text can go into a prompt.
    ...options.dynamicSections.filter((section) => typeof section === 'string'),
  ]);
}

/**
 * The messages of a `turn` request: the history with the dynamic prompt part as a `system` message right before
 * the latest user message (first when the history has none). The stable system prompt then stays the same for
 * the whole session and everything before the latest user message is the same bytes as in the previous turn's
 * requests, so a provider's prefix cache survives a change of memories, environment or TurnStart sections; and
 * within a turn the part stays where it is, so every step's request extends the previous one. The history is
 * not changed; an empty part adds nothing.
 */
export function placeDynamicPrompt(history: readonly Message[], dynamic: string): Message[] {
  const messages = history.slice();
  if (dynamic === '') return messages;
  let latestUser = messages.length - 1;
  // Scanned from the end: the latest user message is the one that opened the turn, a few messages back.
  while (latestUser >= 0 && messages[latestUser]?.type !== 'user') latestUser -= 1;
  messages.splice(Math.max(latestUser, 0), 0, { type: 'system', content: dynamic });
  return messages;
}
