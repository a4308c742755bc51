/**
 * `/rewind` (back to before one of the user's messages: the conversation, the files, or both) and `/fork`
 * (a new session carrying this one's history).
 */
import type { ContentBlock, Session } from '@youyou/agent';
import { plainMessage } from '../../chat/format.js';
import type { CliRuntime } from '../../runtime/setup.js';
import { forkWorkspaceSession } from '../../sessions/open-session.js';
import { storedMessageCount } from '../../sessions/session-table.js';
import { neutralizeLine } from '../../text/terminal-text.js';
import { CHECKPOINTS_OFF, type CheckpointCommandContext, carryOut } from './checkpoint-commands.js';

/** What `/rewind` and `/fork` need of the chat (a part of the slash commands' context). */
export interface RewindCommandContext extends CheckpointCommandContext {
  readonly runtime: CliRuntime;
  /** The workspace the chat works in (recorded for a fork). */
  readonly workspace: string;
  columns(): number;
  closeSession(): Promise<void>;
  showResumed(session: Session, messageCount: number): void;
}

/** A message's text on one line, cut to `width` columns (an attachment is shown by its kind). */
function messageLine(input: readonly ContentBlock[], width: number): string {
  const text = input
    .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
  const shown = neutralizeLine(text);
  return shown.length > width ? `${shown.slice(0, Math.max(1, width - 1))}…` : shown;
}

function failure(context: RewindCommandContext, error: unknown): void {
  context.write(
    context.styles.red(`${plainMessage(error instanceof Error ? error.message : String(error))}\n`),
  );
}

/** `/rewind`: lists the user's messages, asks which one and what to restore, then restores it. */
export async function rewind(context: RewindCommandContext): Promise<void> {
  const { styles } = context;
  const session = context.session();
  const turns = session?.turns() ?? [];
  if (session === undefined || turns.length === 0) {
    context.write(styles.dim('Nothing to rewind: no message was sent in this session.\n'));
    return;
  }
  const width = Math.max(20, context.columns() - 8);
  turns.forEach((turn, index) => {
    context.write(`${styles.cyan(String(index + 1).padStart(3))}  ${messageLine(turn.input, width)}\n`);
  });
  const which = await context.ask(`Rewind to before which message? [1-${turns.length}] `);
  const number = Number.parseInt(which?.trim() ?? '', 10);
  const chosen = turns[number - 1];
  if (!/^\s*\d+\s*$/.test(which ?? '') || chosen === undefined) {
    context.write(styles.dim('Rewind cancelled.\n'));
    return;
  }
  const what = (await context.ask('Restore the (c)onversation, the (f)iles, or (b)oth? '))
    ?.trim()
    .toLowerCase();
  if (what !== 'c' && what !== 'f' && what !== 'b') {
    context.write(styles.dim('Rewind cancelled.\n'));
    return;
  }
  try {
    if (what !== 'c') {
      const store = context.runtime.checkpoints;
      const turnIds = turns.slice(number - 1).map((turn) => turn.turnId);
      const plan = await store?.planRewind(session.id, turnIds);
      if (store === undefined) context.write(styles.dim(CHECKPOINTS_OFF));
      else if (plan === undefined) context.write(styles.dim('No file was changed from that message on.\n'));
      else await carryOut(context, plan);
    }
    if (what !== 'f') {
      await session.rewind({ toTurnId: chosen.turnId });
      context.write(
        styles.dim(
          `Conversation rewound to before message ${number}: the model no longer sees it or what followed.\n`,
        ),
      );
    }
  } catch (error) {
    failure(context, error);
  }
}

/** `/fork`: closes this session and continues in a new one that carries its history; prints the new id. */
export async function fork(context: RewindCommandContext): Promise<void> {
  const { runtime, styles } = context;
  const session = context.session();
  if (session === undefined) {
    context.write(styles.dim('Nothing to fork: no message was sent in this session.\n'));
    return;
  }
  const sourceId = session.id;
  try {
    // The fork needs a free slot: the chat holds one session at a time.
    await context.closeSession();
    const forked = await forkWorkspaceSession(runtime, sourceId, context.workspace);
    context.showResumed(forked, await storedMessageCount(runtime.sessions, forked.id));
    context.write(styles.dim(`Forked: this is session ${forked.id}; ${sourceId} stays as it was.\n`));
  } catch (error) {
    failure(context, error);
  }
}
