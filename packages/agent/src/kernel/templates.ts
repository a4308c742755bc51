/**
 * Every fixed text the runtime sends to a model, in one place. `{name}` marks a slot that
 * `fillTemplate` fills in. These are the project's own texts.
 */

/** The system prompt of a compaction request. */
export const COMPACT_PROMPT = `You are compacting the context of a long-running conversation between a user and an AI assistant that uses tools. The assistant will continue the work from your summary alone, so it must not lose anything it needs.

Write a summary that covers:
- the user's goals and every request they made, with their exact constraints and preferences;
- what has been done so far: decisions made, files or resources touched, commands run and their outcomes;
- facts learned along the way that are still relevant (names, paths, values, error messages);
- open questions, and the work that remains, in the order it should happen next.

Be specific and dense. Do not invent anything that is not in the conversation. Write the summary as plain prose and short lists, without any preamble.`;

/** The user message of a compaction request; `{transcript}` is the conversation to summarise. */
export const COMPACT_INPUT_TEMPLATE = `Here is the conversation to summarise:

<conversation>
{transcript}
</conversation>

Write the summary now.`;

/** Put in front of a compaction summary when it replaces the earlier context. */
export const COMPACT_SUMMARY_PREFIX = `The earlier part of this conversation was compacted to save space. The summary below was written from it and replaces it; treat it as what happened before the messages that follow.`;

/** Heads the list of skills the model may activate itself. */
export const SKILL_SECTION_HEADER = `## Skills

Skills are sets of instructions for particular kinds of task. These are available in this session:`;

/** Says how the model uses the listed skills. */
export const SKILL_USAGE_RULES = `### Using skills
- When a task clearly matches a skill's description, call the \`activate_skill\` tool with the skill's name before you start, then follow the instructions it returns.
- Activate a skill only when it fits the task; do not activate skills just to read them.
- When the user invokes a skill with /name, its instructions are already in the conversation: follow them without activating it again.`;

/** Heads the list of active plugins. */
export const PLUGIN_SECTION_HEADER = `## Plugins

These plugins are active in this session and may add context or act on tool calls:`;

/** Heads the memories shown to the model. */
export const MEMORY_INSTRUCTIONS = `## Memory

These are things you learned about the user and their work in earlier sessions. Use them when they are relevant, prefer what the user says now when it disagrees with them, and do not mention them unless it helps.`;

/** The system prompt of a memory extraction request. */
export const MEMORY_EXTRACTION_PROMPT = `You extract long-term memories from a conversation between a user and an AI assistant. A memory is a durable fact that will still help in a future, unrelated conversation: the user's preferences, their role and projects, conventions they follow, decisions that stand, and corrections they made to the assistant.

Do not record passing details of the current task, anything the assistant said without the user confirming it, or secrets such as passwords and keys. Write each memory as one self-contained sentence.

Answer with JSON only, in this shape:
{"memories": [{"content": "...", "category": "preference" | "fact" | "project" | "instruction"}]}
Answer {"memories": []} when there is nothing worth keeping.`;

/** The user message of a memory extraction request; `{transcript}` is the conversation since the last extraction. */
export const MEMORY_EXTRACTION_INPUT_TEMPLATE = `Extract the memories worth keeping from this conversation:

<conversation>
{transcript}
</conversation>`;

/** The system prompt of a memory consolidation request; `{maxItems}` is the most the answer may hold. */
export const MEMORY_CONSOLIDATION_PROMPT = `You maintain a store of long-term memories about a user. The store has grown past its limit. Merge memories that say the same thing, drop ones that are outdated or contradicted by newer ones, and keep the most useful, so that at most {maxItems} remain. Keep each memory one self-contained sentence.

Answer with JSON only, in this shape:
{"memories": [{"content": "...", "category": "..."}]}`;

/** The user message of a memory consolidation request; `{memories}` lists the store, newest first. */
export const MEMORY_CONSOLIDATION_INPUT_TEMPLATE = `The memories, newest first:

{memories}`;

/** Follows an assistant message that was cut off, so the model knows it is partial. */
export const INTERRUPTED_MESSAGE_NOTICE = `[The previous assistant message was interrupted before it was finished.]`;

/** Injected when a turn reached its tool-call limit; `{limit}` is the limit. */
export const TOOL_LIMIT_NOTICE = `[This turn reached its limit of {limit} tool calls and was stopped. Tell the user what was done and what remains, and continue only if they ask.]`;

/** Replaces each `{name}` slot of a template. */
export function fillTemplate(template: string, values: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (slot, name: string) => {
    const value = values[name];
    return value === undefined ? slot : String(value);
  });
}
