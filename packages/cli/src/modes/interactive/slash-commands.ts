/**
 * The slash commands of the interactive chat (`/help`, `/sessions`, `/resume`, `/compact`, `/model`, …). They
 * act on the chat through `ChatCommandContext`, so that the chat keeps its prompt, turn and key handling to itself.
 */
import type { Session } from '@youyou/agent';
import { plainMessage, type Styles } from '../../chat/format.js';
import { sessionUsageReport } from '../../chat/usage-line.js';
import type { CliRuntime } from '../../runtime/setup.js';
import { formatSessionTable, storedMessageCount } from '../../sessions/session-table.js';
import { resolveSessionId, workspacesOf } from '../../sessions/workspace-sessions.js';
import { neutralizeLine } from '../../text/terminal-text.js';
import { showSessionDiff, undoLastCall } from './checkpoint-commands.js';
import { formatSkills, interactiveHelp } from './help.js';
import { listPromptCommands } from './mcp-prompts.js';
import { fork, rewind } from './rewind-commands.js';
import {
  initAgentsFile,
  memoryCommand,
  permissionsText,
  type WorkspaceCommandContext,
} from './workspace-commands.js';

/** A slash command line: `/name` and what follows it. */
export const COMMAND = /^\/([a-zA-Z0-9_-]+)(?:\s+(.*))?$/s;

/** What a slash command can see and do of the chat it runs in. */
export interface ChatCommandContext extends WorkspaceCommandContext {
  readonly runtime: CliRuntime;
  /** The workspace the chat works in. */
  readonly workspace: string;
  readonly color: boolean;
  readonly styles: Styles;
  /** The terminal's width now. */
  columns(): number;
  write(text: string): void;
  /** The chat's session; undefined before the first message or after /new. */
  session(): Session | undefined;
  /** Closes the chat's session (SessionEnd, memory extraction) with a status line while it runs. */
  closeSession(): Promise<void>;
  /** Makes `session` the chat's session and shows where it stood. */
  showResumed(session: Session, messageCount: number): void;
  /** Runs `work` under a status line; Ctrl-C meanwhile leaves the program at once. */
  withStatus(status: string, work: () => Promise<void>): Promise<void>;
  /** Switches reasoning between shown in full and collapsed; answers whether it is now shown in full. */
  toggleReasoning(): boolean;
  /** Ends the chat's loop once the command is done. */
  leave(): void;
  /** Asks the user for one line; undefined when they pressed Ctrl-C or Ctrl-D instead. */
  ask(prompt: string): Promise<string | undefined>;
}

/** The message of a thrown value, plain, on one line of its own. */
function errorLine(error: unknown): string {
  return `${plainMessage(error instanceof Error ? error.message : String(error))}\n`;
}

/** Handles a slash command; 'not_a_command' for `/name` of a skill, which goes to the model. */
export async function runSlashCommand(
  context: ChatCommandContext,
  command: { name: string; argument: string },
): Promise<'done' | 'not_a_command'> {
  const { runtime, styles, color } = context;
  const { name, argument } = command;
  switch (name) {
    case 'help':
      context.write(interactiveHelp(color));
      return 'done';
    case 'skills':
      context.write(formatSkills(runtime.skills, color));
      return 'done';
    case 'sessions': {
      const page = await runtime.sessions.listSessions(undefined, 10);
      if (page.sessions.length === 0) context.write('No saved sessions yet.\n');
      else {
        context.write(
          formatSessionTable({
            sessions: page.sessions,
            workspaces: await workspacesOf(runtime.sessions, page.sessions),
            columns: context.columns(),
            color,
            currentId: context.session()?.id,
          }),
        );
      }
      return 'done';
    }
    case 'resume':
      await resume(context, argument);
      return 'done';
    case 'compact':
      await compact(context, argument);
      return 'done';
    case 'new':
    case 'clear':
      await context.closeSession();
      // Erase the screen and its scrollback, cursor home: the new session starts on a clean terminal.
      if (name === 'clear') context.write('\x1b[2J\x1b[3J\x1b[H');
      context.write(styles.dim('New session.\n'));
      return 'done';
    case 'usage':
      context.write(
        sessionUsageReport({
          totals: context.session()?.usage(),
          modelId: context.session()?.modelId ?? runtime.provider.modelId,
          color,
        }),
      );
      return 'done';
    case 'model':
      await switchModel(context, argument);
      return 'done';
    case 'reasoning':
      context.write(
        styles.dim(
          context.toggleReasoning()
            ? 'Reasoning is shown in full.\n'
            : 'Reasoning is collapsed to one line.\n',
        ),
      );
      return 'done';
    case 'init':
      await initAgentsFile(context);
      return 'done';
    case 'memory':
      await memoryCommand(context, argument);
      return 'done';
    case 'permissions':
      context.write(permissionsText(context));
      return 'done';
    case 'prompts':
      context.write(await listPromptCommands({ servers: runtime.mcpServers, styles }));
      return 'done';
    case 'undo':
      await undoLastCall(context);
      return 'done';
    case 'diff':
      await showSessionDiff(context);
      return 'done';
    case 'rewind':
      await rewind(context);
      return 'done';
    case 'fork':
      await fork(context);
      return 'done';
    case 'exit':
    case 'quit':
      context.leave();
      return 'done';
    default:
      if (runtime.skills.some((skill) => skill.name === name)) return 'not_a_command';
      context.write(styles.red(`unknown command /${name} — /help lists the commands, /skills the skills\n`));
      return 'done';
  }
}

/** `/resume ID`: closes the chat's session and continues the stored one. */
async function resume(context: ChatCommandContext, argument: string): Promise<void> {
  const { runtime, styles } = context;
  if (argument === '') {
    context.write(styles.red('usage: /resume ID (see /sessions)\n'));
    return;
  }
  try {
    const id = await resolveSessionId(runtime.sessions, argument);
    // A session another youyou runs is refused (SESSION_BUSY) before this one is closed.
    if (id !== context.session()?.id) await (await runtime.sessions.acquireSession(id)).release();
    await context.closeSession();
    const session = await runtime.agent.resumeSession(id);
    context.showResumed(session, await storedMessageCount(runtime.sessions, id));
  } catch (error) {
    context.write(styles.red(errorLine(error)));
  }
}

/** `/model NAME`: the next requests go to NAME; without a name, says which model is in use. */
async function switchModel(context: ChatCommandContext, name: string): Promise<void> {
  const { runtime, styles } = context;
  if (name === '') {
    context.write(`${neutralizeLine(runtime.provider.modelId)} ${styles.dim('(/model NAME switches)')}\n`);
    return;
  }
  try {
    const chosen = await runtime.switchModel(name);
    context.write(styles.dim(`Model: ${neutralizeLine(chosen.modelId)}\n`));
  } catch (error) {
    context.write(styles.red(errorLine(error)));
  }
}

/** `/compact [instructions]`: summarises the session's context now, with a status line while it runs. */
async function compact(context: ChatCommandContext, instructions: string): Promise<void> {
  const { styles } = context;
  const session = context.session();
  if (session === undefined) {
    context.write(styles.dim('Nothing to compact yet: no message was sent in this session.\n'));
    return;
  }
  let outcome = '';
  await context.withStatus('compacting the context', async () => {
    try {
      await session.compact(instructions === '' ? undefined : instructions);
      outcome = styles.dim('Context compacted: the earlier conversation is now a summary.\n');
    } catch (error) {
      outcome = styles.red(errorLine(error));
    }
  });
  context.write(outcome);
}
