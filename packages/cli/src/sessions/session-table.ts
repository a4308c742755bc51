import type { SessionStorage, SessionSummary } from '@youyou/agent';
import { createStyles, truncate } from '../chat/format.js';
import type { CliSettings } from '../config/config.js';
import { preparePrivateHome } from '../runtime/private-home.js';
import { neutralizeLine, terminalSafeJson } from '../text/terminal-text.js';
import { shortId, workspacesOf } from './workspace-sessions.js';

function localTime(date: Date): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The most columns the WORKSPACE column takes; a longer path is cut from the left. */
const MAX_WORKSPACE_COLUMNS = 60;

/** A workspace as the table shows it: the whole path when it fits, else its end after `…`. */
function shownWorkspace(workspace: string | undefined): string {
  if (workspace === undefined) return '-';
  const characters = [...neutralizeLine(workspace)];
  return characters.length <= MAX_WORKSPACE_COLUMNS
    ? characters.join('')
    : `…${characters.slice(characters.length - MAX_WORKSPACE_COLUMNS + 1).join('')}`;
}

/** A table of sessions, newest first, fitted to `columns`, with each one's workspace; `currentId` is marked. */
export function formatSessionTable(options: {
  sessions: readonly SessionSummary[];
  workspaces: ReadonlyMap<string, string>;
  columns: number;
  color: boolean;
  currentId?: string | undefined;
}): string {
  const styles = createStyles(options.color);
  const workspaces = options.sessions.map((session) =>
    shownWorkspace(options.workspaces.get(session.sessionId)),
  );
  const workspaceWidth = Math.max('WORKSPACE'.length, ...workspaces.map((text) => [...text].length));
  const header = `  ${'ID'.padEnd(8)}  ${'UPDATED'.padEnd(16)}  ${'MSGS'.padStart(4)}  ${'WORKSPACE'.padEnd(workspaceWidth)}  TITLE`;
  const titleRoom = Math.max(10, options.columns - header.length + 5 - 1);
  const rows = options.sessions.map((session, index) => {
    const marker = session.sessionId === options.currentId ? styles.green('*') : ' ';
    const title =
      session.title.trim() === '' ? '(no message yet)' : neutralizeLine(session.title.replace(/\s+/g, ' '));
    const workspace = neutralizeLine(workspaces[index] ?? '-').padEnd(workspaceWidth);
    return `${marker} ${styles.cyan(shortId(session.sessionId))}  ${localTime(session.updatedAt)}  ${String(session.messageCount).padStart(4)}  ${styles.dim(workspace)}  ${truncate(title, titleRoom)}`;
  });
  return `${styles.dim(header)}\n${rows.join('\n')}\n`;
}

/** The stored message count of a session, the number `sessions` shows (0 for an unknown one). */
export async function storedMessageCount(storage: SessionStorage, sessionId: string): Promise<number> {
  const found = await storage.findSession(sessionId);
  return found.find((session) => session.sessionId === sessionId)?.messageCount ?? 0;
}

/** `youyou sessions [--search TEXT] [--limit N] [--json]`: lists sessions newest first. */
export async function runSessionsCommand(options: {
  settings: CliSettings;
  search: string | undefined;
  limit: number;
  json: boolean;
  write: (text: string) => void;
  columns: number;
  color: boolean;
}): Promise<number> {
  preparePrivateHome(options.settings.home);
  const { openSqliteStorage } = await import('@youyou/sqlite');
  const storage = await openSqliteStorage(options.settings.databasePath);
  try {
    const sessions =
      options.search === undefined
        ? (await storage.sessions.listSessions(undefined, options.limit)).sessions
        : (await storage.sessions.findSession(options.search)).slice(0, options.limit);
    const workspaces = await workspacesOf(storage.sessions, sessions);
    if (options.json) {
      for (const session of sessions) {
        const workspace = workspaces.get(session.sessionId) ?? null;
        options.write(`${terminalSafeJson({ ...session, workspace })}\n`);
      }
      return 0;
    }
    if (sessions.length === 0) {
      options.write(
        options.search === undefined
          ? 'No sessions yet.\n'
          : `No session mentions '${neutralizeLine(options.search)}'.\n`,
      );
      return 0;
    }
    options.write(
      formatSessionTable({ sessions, workspaces, columns: options.columns, color: options.color }),
    );
    return 0;
  } finally {
    await storage.close();
  }
}
