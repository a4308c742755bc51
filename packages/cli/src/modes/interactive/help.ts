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

/** The help of the interactive prompt. */
export function interactiveHelp(color: boolean): string {
  const styles = createStyles(color);
  const rows: [string, string][] = [
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
    ['/exit', 'leave (also Ctrl-D at an empty prompt, or Ctrl-C twice)'],
  ];
  const lines = rows.map(([command, text]) => `${styles.cyan(command.padEnd(16))}${text}`);
  lines.push(
    '',
    styles.dim(
      'Ctrl-C cancels a running turn. ↑/↓ browse earlier prompts. Enter during a turn sends a message the model reads at its next step.',
    ),
    styles.dim(
      'Approvals: y yes · n no · r no, and say why · a then Enter/1/2 always (a rule for this session) · space pages.',
    ),
  );
  return `${lines.join('\n')}\n`;
}
