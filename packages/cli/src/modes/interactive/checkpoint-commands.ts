/**
 * The chat's commands on workspace checkpoints: `/undo` (the last mutating call), `/diff` (what the session
 * changed) and the files part of `/rewind`. Files the user changed since youyou last looked are shown and kept
 * unless the user says to overwrite them.
 */
import type { Session } from '@youyou/agent';
import type { Styles } from '../../chat/format.js';
import type { RestorePlan } from '../../runtime/checkpoints.js';
import type { CliRuntime } from '../../runtime/setup.js';
import { neutralize, neutralizeLine } from '../../text/terminal-text.js';

/** What these commands need of the chat (a part of the slash commands' context). */
export interface CheckpointCommandContext {
  readonly runtime: Pick<CliRuntime, 'checkpoints'>;
  readonly styles: Styles;
  write(text: string): void;
  session(): Session | undefined;
  ask(prompt: string): Promise<string | undefined>;
}

/** What the commands say when config.json turned checkpoints off. */
export const CHECKPOINTS_OFF =
  'Checkpoints are off ("checkpoints": false in config.json): no file changes were recorded.\n';

/** How many paths a restore's report names before it says how many more. */
const SHOWN_PATHS = 20;

function pathList(paths: readonly string[]): string {
  const shown = paths.slice(0, SHOWN_PATHS).map((entry) => `  ${neutralizeLine(entry)}\n`);
  const more = paths.length > SHOWN_PATHS ? `  … and ${paths.length - SHOWN_PATHS} more\n` : '';
  return shown.join('') + more;
}

/**
 * Carries out `plan`, asking first about the files the user changed meanwhile (kept unless the answer is yes),
 * and says what it did.
 */
export async function carryOut(context: CheckpointCommandContext, plan: RestorePlan): Promise<void> {
  const { styles } = context;
  const store = context.runtime.checkpoints;
  if (store === undefined) return;
  let overwrite = false;
  if (plan.userChanged.length > 0) {
    context.write(
      styles.yellow(
        `${plan.userChanged.length} file(s) were changed outside this session since its last change (or are not recorded: too large, ignored, unreadable, a folder):\n`,
      ),
    );
    context.write(pathList(plan.userChanged));
    const answer = await context.ask('Overwrite them too? [y/N] ');
    overwrite = answer !== undefined && /^\s*y(es)?\s*$/i.test(answer);
  }
  const { restored, kept } = await store.apply(plan, overwrite);
  if (restored.length === 0 && kept.length === 0) {
    context.write(styles.dim('The files are already as they were.\n'));
    return;
  }
  context.write(styles.dim(`Restored ${restored.length} file(s):\n`));
  context.write(pathList(restored));
  if (kept.length > 0) context.write(styles.yellow(`Kept ${kept.length} file(s) you changed.\n`));
  if (plan.leftOut.length > 0) {
    context.write(
      styles.dim(`Left ${plan.leftOut.length} file(s) as they are: the checkpoint did not record them.\n`),
    );
  }
}

/** `/undo`: takes back the files of the session's last mutating call (the conversation stays). */
export async function undoLastCall(context: CheckpointCommandContext): Promise<void> {
  const { styles } = context;
  const store = context.runtime.checkpoints;
  const session = context.session();
  if (store === undefined) {
    context.write(styles.dim(CHECKPOINTS_OFF));
    return;
  }
  if (session === undefined) {
    context.write(styles.dim('Nothing to undo: no file was changed in this session.\n'));
    return;
  }
  try {
    const plan = await store.planUndo(session.id);
    if (plan === undefined) {
      context.write(styles.dim('Nothing to undo: no file was changed in this session.\n'));
      return;
    }
    await carryOut(context, plan);
  } catch (error) {
    context.write(
      styles.red(`undo failed: ${neutralizeLine(error instanceof Error ? error.message : String(error))}\n`),
    );
  }
}

/** `/diff`: what the session changed in the workspace, as a unified diff. */
export async function showSessionDiff(context: CheckpointCommandContext): Promise<void> {
  const { styles } = context;
  const store = context.runtime.checkpoints;
  const session = context.session();
  try {
    if (store === undefined) {
      context.write(styles.dim(CHECKPOINTS_OFF));
      return;
    }
    const diff = session === undefined ? undefined : await store.diff(session.id);
    if (diff === undefined || diff.text === '') {
      context.write(styles.dim('No changes: the files are as they were before this session changed any.\n'));
      return;
    }
    const text = neutralize(diff.text);
    const coloured = text
      .split('\n')
      .map((line) => {
        if (line.startsWith('+') && !line.startsWith('+++')) return styles.green(line);
        if (line.startsWith('-') && !line.startsWith('---')) return styles.red(line);
        return line;
      })
      .join('\n');
    context.write(coloured.endsWith('\n') ? coloured : `${coloured}\n`);
    if (diff.cut) context.write(styles.dim('(the diff was cut here: it is longer than this)\n'));
  } catch (error) {
    context.write(
      styles.red(`diff failed: ${neutralizeLine(error instanceof Error ? error.message : String(error))}\n`),
    );
  }
}
