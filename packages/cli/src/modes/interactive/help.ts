import type { SkillDefinition } from '@youyou/agent';
import { createStyles } from '../../chat/format.js';
import { neutralizeLine } from '../../text/terminal-text.js';

/** The skills as `/name — description` lines. */
export function formatSkills(skills: readonly SkillDefinition[], color: boolean): string {
  const styles = createStyles(color);
  if (skills.length === 0) {
    return `No skills. Put SKILL.md files in .youyou/skills/<name>/ or .agents/skills/<name>/ of the workspace, or in ~/.youyou/skills/<name>/.\n`;
  }
  return `${skills.map((skill) => `${styles.cyan(`/${neutralizeLine(skill.name)}`)}  ${neutralizeLine(skill.description)}`).join('\n')}\n`;
}

/**
 * Every slash command of the interactive chat, with what it does: the one list that `/help` and
 * `youyou --help` show. A command added to slash-commands.ts gets its row here.
 */
export const SLASH_COMMANDS: readonly (readonly [usage: string, description: string])[] = [
  ['/help', 'this list'],
  ['/skills', 'the skills of .youyou/skills, .agents/skills and ~/.youyou/skills; /NAME uses one'],
  ['/sessions', 'recent sessions (* marks this one)'],
  ['/resume ID', 'switch to a saved session (an id or a unique prefix)'],
  ['/compact [TEXT]', 'summarise the conversation so far now (TEXT: what the summary must keep)'],
  ['/new', 'start a new session (the current one is saved and its memories extracted)'],
  ['/usage', 'tokens and cost of this session so far'],
  ['/clear', 'clear the screen and start a new session'],
  ['/model NAME', 'switch to model NAME for the rest of this session (/model shows the current one)'],
  ['/reasoning', 'toggle showing the model’s reasoning in full instead of one summary line'],
  ['/rewind', 'go back to before one of your messages: the conversation, the files, or both'],
  ['/undo', 'take back the file changes of the last mutating tool call (shell included)'],
  ['/diff', 'what this session changed in the workspace, as a diff'],
  ['/fork', 'continue in a new session with this one’s history (this one stays as it is)'],
  ['/init', 'write an AGENTS.md for this workspace with the model’s help (asks before replacing one)'],
  ['/memory', 'list the long-term memories; /memory delete N deletes one'],
  ['/permissions', 'the sandbox and the approval rules in force (config file and "always" answers)'],
  ['/prompts', 'the MCP servers’ prompts; /SERVER:PROMPT [key=value | value …] sends one'],
  ['/exit', 'leave (also Ctrl-D at an empty prompt, or Ctrl-C twice)'],
];

/** What the prompt line does besides slash commands. */
const PROMPT_KEYS = [
  'Shift+Enter, Alt+Enter or \\ then Enter: a new line. A paste arrives whole (a long one shows as [pasted N lines]).',
  '@path attaches a workspace file (Tab completes). !command runs a command in the sandbox; its output goes with your next message.',
];

/** The slash commands as `youyou --help` lists them. */
export function slashCommandsUsage(): string {
  const rows = SLASH_COMMANDS.map(([command, text]) => `  ${command.padEnd(18)}${text}`);
  return `Interactive commands:\n${rows.join('\n')}\n${PROMPT_KEYS.map((line) => `  ${line}`).join('\n')}\n`;
}

/** The help of the interactive prompt. */
export function interactiveHelp(color: boolean): string {
  const styles = createStyles(color);
  const lines = SLASH_COMMANDS.map(([command, text]) => `${styles.cyan(command.padEnd(16))}${text}`);
  lines.push(
    '',
    styles.dim(
      'Ctrl-C cancels a running turn. ↑/↓ browse earlier prompts. Enter during a turn sends a message the model reads at its next step.',
    ),
    ...PROMPT_KEYS.map((line) => styles.dim(line)),
    styles.dim(
      'Approvals: y yes · n no · r no, and say why · a then Enter/1/2 always (a rule for this session) · space pages.',
    ),
  );
  return `${lines.join('\n')}\n`;
}
