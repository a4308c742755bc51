/**
 * `/init` (an AGENTS.md written with the model's help), `/memory` (long-term memories: list, delete) and
 * `/permissions` (the approval rules in force).
 */
import { lstat, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { ApprovalRule } from '../../approval/rules.js';
import type { Styles } from '../../chat/format.js';
import type { CliSettings } from '../../config/config.js';
import type { CliRuntime } from '../../runtime/setup.js';
import { countOf } from '../../text/plural.js';
import { neutralizeLine } from '../../text/terminal-text.js';

/** The namespace the CLI's agent keeps its long-term memories in. */
export const CLI_MEMORY_NAMESPACE = 'default';
/** The most memories `/memory` lists (and so numbers). */
const MEMORY_LIST_LIMIT = 200;
/** Why a mutating call of /init's turn is refused. */
const INIT_READ_ONLY =
  '/init only inspects the workspace: use the read-only tools (list_dir, glob, grep, read_file) and answer the content of AGENTS.md';

/** What the workspace commands need of the chat. */
export interface WorkspaceCommandContext {
  readonly runtime: CliRuntime;
  readonly settings: CliSettings;
  readonly styles: Styles;
  write(text: string): void;
  /** Asks a yes/no question at the prompt; true for yes. */
  confirm(question: string): Promise<boolean>;
  /** Runs a turn of the chat's session with `text`; the final answer's text, or undefined when it did not complete. */
  runTurn(text: string): Promise<string | undefined>;
  /** The rules the user chose with "always" in this run. */
  alwaysRules(): readonly ApprovalRule[];
}

/** What /init asks the model. */
export const INIT_PROMPT = [
  'Write an AGENTS.md for this workspace: the instructions a coding agent needs to work in it.',
  'Inspect the workspace first with the read-only tools (list_dir, glob, grep, read_file): its layout, languages, how to build, test and lint it, its conventions.',
  'Do not change any file. Answer with the content of AGENTS.md only, in Markdown, without any text before or after it; youyou writes the file.',
].join('\n');

/** An answer that is one fenced block is the block's content; any other answer is taken as it is. */
export function agentsFileContent(answer: string): string {
  const trimmed = answer.trim();
  const fenced = /^```[A-Za-z]*\n([\s\S]*?)\n```$/.exec(trimmed);
  return `${(fenced?.[1] ?? trimmed).trimEnd()}\n`;
}

/** `/init`: asks before replacing an AGENTS.md, runs a read-only turn, writes its answer to AGENTS.md. */
export async function initAgentsFile(context: WorkspaceCommandContext): Promise<void> {
  const { styles } = context;
  const file = path.join(context.settings.cwd, 'AGENTS.md');
  const exists = await lstat(file).then(
    () => true,
    () => false,
  );
  if (exists && !(await context.confirm('AGENTS.md exists. Replace it? [y/N] '))) {
    context.write(styles.dim('AGENTS.md is left as it is.\n'));
    return;
  }
  const answer = await context.runtime.withReadOnlyTools(INIT_READ_ONLY, () => context.runTurn(INIT_PROMPT));
  if (answer === undefined || answer.trim() === '') {
    context.write(styles.yellow('No AGENTS.md written: the turn gave no answer.\n'));
    return;
  }
  const content = agentsFileContent(answer);
  try {
    // A new file, never through a symlink: one that stood there was the file the user agreed to replace.
    if (exists) await unlink(file);
    const handle = await open(file, 'wx', 0o644);
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
  } catch (error) {
    context.write(styles.red(`AGENTS.md was not written: ${neutralizeLine(String(error))}\n`));
    return;
  }
  context.write(styles.dim(`Wrote AGENTS.md (${countOf(content.split('\n').length - 1, 'line')}).\n`));
}

/** `/memory` lists the memories, numbered; `/memory delete N` deletes the Nth of that list. */
export async function memoryCommand(context: WorkspaceCommandContext, argument: string): Promise<void> {
  const { styles, runtime } = context;
  const memories = await runtime.memories.search(CLI_MEMORY_NAMESPACE, '', MEMORY_LIST_LIMIT);
  if (argument === '') {
    if (memories.length === 0) {
      context.write(styles.dim('No long-term memories yet (they are drawn from sessions when they end).\n'));
      return;
    }
    const lines = memories.map(
      (memory, index) => `${styles.cyan(String(index + 1).padStart(3))}  ${neutralizeLine(memory.content)}`,
    );
    context.write(`${lines.join('\n')}\n${styles.dim('/memory delete N deletes one.')}\n`);
    return;
  }
  const match = /^(?:delete|rm|del)\s+(\d+)$/i.exec(argument);
  const memory = match === null ? undefined : memories[Number(match[1]) - 1];
  if (memory === undefined) {
    context.write(
      styles.red(`usage: /memory delete N, with N between 1 and ${memories.length} (see /memory)\n`),
    );
    return;
  }
  await runtime.memories.delete(memory.id);
  context.write(styles.dim(`Deleted: ${neutralizeLine(memory.content)}\n`));
}

/** `/permissions`: the sandbox, --yes, the config file's rules and those chosen with "always" in this run. */
export function permissionsText(context: WorkspaceCommandContext): string {
  const { styles, settings, runtime } = context;
  const rules = (title: string, list: readonly ApprovalRule[]): string[] => [
    styles.bold(title),
    ...(list.length === 0 ? [styles.dim('  none')] : list.map((rule) => `  ${neutralizeLine(rule.text)}`)),
  ];
  const lines = [
    `${styles.bold('sandbox')}  ${runtime.sandbox.mode}${runtime.sandbox.network ? ', network allowed' : ', no network'}`,
    settings.yes
      ? `${styles.bold('--yes')}    mutating tools run without asking (deny rules still refuse)`
      : `${styles.bold('asking')}   mutating tools ask first, unless an allow rule lets them run`,
    ...rules(`deny rules (${neutralizeLine(settings.configPath)})`, settings.approvalRules.deny),
    ...rules(`allow rules (${neutralizeLine(settings.configPath)})`, settings.approvalRules.allow),
    ...rules('allowed "always" in this run', context.alwaysRules()),
  ];
  return `${lines.join('\n')}\n`;
}
