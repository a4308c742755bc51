import { readFileSync } from 'node:fs';
import type { SessionStorage, SessionSummary, SkillDefinition } from '@youyou/agent';
import type { SqliteSessionStorage } from '@youyou/sqlite';
import { createStyles, truncate } from '../chat/format.js';
import type { CliSettings } from '../config/config.js';
import { neutralizeLine, terminalSafeJson } from '../text/terminal-text.js';

/** The metadata key under which a session records the workspace it was started in. */
export const WORKSPACE_METADATA_KEY = 'youyou.workspace';

/** How many sessions `--continue` reads at a time while it looks for the latest one of the workspace. */
const CONTINUE_PAGE_SIZE = 50;

import { preparePrivateHome } from '../runtime/private-home.js';

/** A failure of a command that is nobody's mistake in the arguments (an unknown session): exit code 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/** The version of this package, from its package.json (two folders above this file, in src/ and in dist/). */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return manifest.version ?? '0.0.0';
}

/** The short form of a session id shown in listings; `resume` accepts it. */
export function shortId(sessionId: string): string {
  return sessionId.slice(0, 8);
}

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

/** The workspaces the sessions were started in (sessions from before workspaces were recorded have none). */
export async function workspacesOf(
  storage: SqliteSessionStorage,
  sessions: readonly SessionSummary[],
): Promise<Map<string, string>> {
  const values = await storage.metadataOf(
    sessions.map((session) => session.sessionId),
    WORKSPACE_METADATA_KEY,
  );
  const workspaces = new Map<string, string>();
  for (const [sessionId, value] of values) if (typeof value === 'string') workspaces.set(sessionId, value);
  return workspaces;
}

/** Records in the session's log the workspace it runs in, for `--continue` and `sessions`. */
export async function recordWorkspace(options: {
  storage: SessionStorage;
  sessionId: string;
  workspace: string;
}): Promise<void> {
  await options.storage.saveEvent(options.sessionId, {
    timestamp: new Date(),
    payload: { type: 'metadata', key: WORKSPACE_METADATA_KEY, value: options.workspace },
  });
}

/** The stored message count of a session, the number `sessions` shows (0 for an unknown one). */
export async function storedMessageCount(storage: SessionStorage, sessionId: string): Promise<number> {
  const found = await storage.findSession(sessionId);
  return found.find((session) => session.sessionId === sessionId)?.messageCount ?? 0;
}

/** The skills as `/name — description` lines. */
export function formatSkills(skills: readonly SkillDefinition[], color: boolean): string {
  const styles = createStyles(color);
  if (skills.length === 0) {
    return `No skills. Put SKILL.md files in .youyou/skills/<name>/ or .agents/skills/<name>/ of the workspace, or in ~/.youyou/skills/<name>/.\n`;
  }
  return `${skills.map((skill) => `${styles.cyan(`/${neutralizeLine(skill.name)}`)}  ${neutralizeLine(skill.description)}`).join('\n')}\n`;
}

/** The id of the session `given` names: a whole id or a prefix matching exactly one session. */
export async function resolveSessionId(storage: SessionStorage, given: string): Promise<string> {
  const matches = (await storage.findSession(given)).filter((session) => session.sessionId.startsWith(given));
  const exact = matches.find((session) => session.sessionId === given);
  if (exact !== undefined) return exact.sessionId;
  if (matches.length === 1 && matches[0] !== undefined) return matches[0].sessionId;
  if (matches.length === 0) {
    throw new CommandError(`no session has the id '${neutralizeLine(given)}'; 'youyou sessions' lists them`);
  }
  throw new CommandError(
    `'${neutralizeLine(given)}' matches ${matches.length} sessions (${matches.map((session) => shortId(session.sessionId)).join(', ')}); give more of the id`,
  );
}

/** The id of the most recently updated session of `workspace`; CommandError when it has none. */
export async function latestSessionId(storage: SqliteSessionStorage, workspace: string): Promise<string> {
  let cursor: string | undefined;
  let anySession = false;
  do {
    const page = await storage.listSessions(cursor, CONTINUE_PAGE_SIZE);
    anySession ||= page.sessions.length > 0;
    const workspaces = await workspacesOf(storage, page.sessions);
    const latest = page.sessions.find((session) => workspaces.get(session.sessionId) === workspace);
    if (latest !== undefined) return latest.sessionId;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  if (!anySession) throw new CommandError('there is no session to continue yet; run youyou to start one');
  throw new CommandError(
    `no session of this workspace (${neutralizeLine(workspace)}) to continue; 'youyou sessions' lists those of every workspace, 'youyou resume ID' opens one`,
  );
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
