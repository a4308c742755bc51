import type { SkillDefinition } from '../kernel/config.js';
import { AgentError, invalidConfig } from '../kernel/error.js';
import type { Message } from '../kernel/types.js';
import type { ToolHandler, ToolInput, ToolOutput } from '../ports/tool.js';

/** The built-in tool through which the model activates a skill; the name is reserved even without such skills. */
export const ACTIVATE_SKILL_TOOL_NAME = 'activate_skill';

/** What a skill name must look like (the same rule as tool names). */
export const SKILL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * A `/name` at the start of the text or after white space. The name runs to the first character that cannot be
 * part of one; the lookahead refuses a name followed by `/` (a path such as /usr/bin) and, because it also
 * refuses a following name character, stops the match from backtracking to a shorter name.
 */
const INVOCATION = /(?<=^|\s)\/([a-zA-Z0-9_-]+)(?![a-zA-Z0-9_/-])/g;

/**
 * Checks skill definitions at build: names, texts, duplicates and required tools. Throws AgentError
 * INVALID_CONFIG, NAME_CONFLICT or SKILL_DEPENDENCY_NOT_MET.
 */
export function validateSkills(options: {
  skills: readonly SkillDefinition[];
  toolNames: ReadonlySet<string>;
}): void {
  const seen = new Set<string>();
  for (const skill of options.skills) {
    if (typeof skill !== 'object' || skill === null)
      throw invalidConfig('a skill definition must be an object');
    const { name } = skill;
    if (typeof name !== 'string' || !SKILL_NAME_PATTERN.test(name)) {
      throw invalidConfig(`skill name ${JSON.stringify(name)} must match ${SKILL_NAME_PATTERN.source}`);
    }
    if (typeof skill.description !== 'string')
      throw invalidConfig(`skill '${name}': description must be a string`);
    if (typeof skill.prompt !== 'string') throw invalidConfig(`skill '${name}': prompt must be a string`);
    if (skill.displayName !== undefined && typeof skill.displayName !== 'string') {
      throw invalidConfig(`skill '${name}': displayName must be a string`);
    }
    if (skill.allowImplicitInvocation !== undefined && typeof skill.allowImplicitInvocation !== 'boolean') {
      throw invalidConfig(`skill '${name}': allowImplicitInvocation must be a boolean`);
    }
    const required = skill.requiredTools ?? [];
    if (!Array.isArray(required) || required.some((tool) => typeof tool !== 'string')) {
      throw invalidConfig(`skill '${name}': requiredTools must be an array of tool names`);
    }
    if (seen.has(name)) {
      throw new AgentError({ code: 'NAME_CONFLICT', message: `skill '${name}' is registered twice` });
    }
    seen.add(name);
    for (const tool of required) {
      if (!options.toolNames.has(tool)) {
        throw new AgentError({
          code: 'SKILL_DEPENDENCY_NOT_MET',
          message: `skill '${name}' requires tool '${tool}', which is not registered`,
        });
      }
    }
  }
}

/** The skill's prompt wrapped with its name, as the model sees it (0006 §14). */
function renderSkill(skill: SkillDefinition): string {
  return `<skill>\n<name>${skill.name}</name>\n${skill.prompt}\n</skill>`;
}

/**
 * The registered skills: finds `/name` invocations in user text, renders the message injected for each, and
 * offers the `activate_skill` tool for skills the model may activate itself. Definitions are validated by the
 * builder (`validateSkills`) before they get here.
 */
export class SkillManager {
  readonly #skills = new Map<string, SkillDefinition>();

  constructor(skills: readonly SkillDefinition[]) {
    for (const skill of skills) {
      if (!this.#skills.has(skill.name)) this.#skills.set(skill.name, skill);
    }
  }

  /** The registered skills invoked as `/name` in the text, in order of first appearance, each once. */
  detectInvocations(text: string): SkillDefinition[] {
    // Every user message passes here: most agents have no skills, and most messages no slash.
    if (this.#skills.size === 0 || !text.includes('/')) return [];
    const found = new Set<SkillDefinition>();
    for (const match of text.matchAll(INVOCATION)) {
      const skill = this.#skills.get(match[1] ?? '');
      if (skill !== undefined) found.add(skill);
    }
    return [...found];
  }

  /** The system message injected before the user message of a turn that invokes the skill. */
  renderInjection(skill: SkillDefinition): Message {
    return { type: 'system', content: renderSkill(skill) };
  }

  /** The skills the model may activate itself, in registration order. */
  implicitSkills(): SkillDefinition[] {
    return [...this.#skills.values()].filter((skill) => skill.allowImplicitInvocation === true);
  }

  /** The read-only `activate_skill` tool serving the implicit skills, or undefined when there are none. */
  createActivateSkillTool(): ToolHandler | undefined {
    const implicit = new Map(this.implicitSkills().map((skill) => [skill.name, skill]));
    if (implicit.size === 0) return undefined;
    const names = [...implicit.keys()].join(', ');
    return {
      name: ACTIVATE_SKILL_TOOL_NAME,
      description:
        'Loads the instructions of a skill listed in the Skills section of the system prompt. Call it with the ' +
        "skill's name before starting a task that matches the skill's description, then follow the instructions it returns.",
      parametersSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: `The name of the skill to activate, one of: ${names}.` },
        },
        required: ['name'],
        additionalProperties: false,
      },
      isMutating: false,
      execute: async (input: ToolInput): Promise<ToolOutput> => {
        const name = (input.arguments as { name?: unknown } | null | undefined)?.name;
        const skill = typeof name === 'string' ? implicit.get(name) : undefined;
        if (skill === undefined) {
          return { isError: true, content: `[SKILL_NOT_FOUND] skill '${String(name)}'` };
        }
        return { isError: false, content: renderSkill(skill) };
      },
    };
  }
}
