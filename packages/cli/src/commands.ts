import { mkdirSync, readFileSync } from 'node:fs';
import type { SessionStorage, SessionSummary, SkillDefinition } from '@youyou/agent';
import { openSqliteStorage } from '@youyou/sqlite';
import type { CliSettings } from './config.js';
import { createStyles, truncate } from './format.js';

/** A failure of a command that is nobody's mistake in the arguments (an unknown session): exit code 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/** The version of this package, from its package.json (one folder above both src/ and dist/). */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
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

/** A table of sessions, newest first, fitted to `columns`; `currentId` is marked. */
export function formatSessionTable(options: {
  sessions: readonly SessionSummary[];
  columns: number;
  color: boolean;
  currentId?: string | undefined;
}): string {
  const styles = createStyles(options.color);
  const header = `  ${'ID'.padEnd(8)}  ${'UPDATED'.padEnd(16)}  ${'MSGS'.padStart(4)}  TITLE`;
  const titleRoom = Math.max(10, options.columns - header.length + 5 - 1);
  const rows = options.sessions.map((session) => {
    const marker = session.sessionId === options.currentId ? styles.green('*') : ' ';
    const title = session.title.trim() === '' ? '(no message yet)' : session.title.replace(/\s+/g, ' ');
    return `${marker} ${styles.cyan(shortId(session.sessionId))}  ${localTime(session.updatedAt)}  ${String(session.messageCount).padStart(4)}  ${truncate(title, titleRoom)}`;
  });
  return `${styles.dim(header)}\n${rows.join('\n')}\n`;
}

/** The skills as `/name — description` lines. */
export function formatSkills(skills: readonly SkillDefinition[], color: boolean): string {
  const styles = createStyles(color);
  if (skills.length === 0) {
    return `No skills. Put SKILL.md files in .youyou/skills/<name>/ of the workspace or in ~/.youyou/skills/<name>/.\n`;
  }
  return `${skills.map((skill) => `${styles.cyan(`/${skill.name}`)}  ${skill.description}`).join('\n')}\n`;
}

/** The id of the session `given` names: a whole id or a prefix matching exactly one session. */
export async function resolveSessionId(storage: SessionStorage, given: string): Promise<string> {
  const matches = (await storage.findSession(given)).filter((session) => session.sessionId.startsWith(given));
  const exact = matches.find((session) => session.sessionId === given);
  if (exact !== undefined) return exact.sessionId;
  if (matches.length === 1 && matches[0] !== undefined) return matches[0].sessionId;
  if (matches.length === 0) {
    throw new CommandError(`no session has the id '${given}'; 'youyou sessions' lists them`);
  }
  throw new CommandError(
    `'${given}' matches ${matches.length} sessions (${matches.map((session) => shortId(session.sessionId)).join(', ')}); give more of the id`,
  );
}

/** The id of the most recently updated session; CommandError when there is none. */
export async function latestSessionId(storage: SessionStorage): Promise<string> {
  const page = await storage.listSessions(undefined, 1);
  const latest = page.sessions[0];
  if (latest === undefined)
    throw new CommandError('there is no session to continue yet; run youyou to start one');
  return latest.sessionId;
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
  mkdirSync(options.settings.home, { recursive: true });
  const storage = await openSqliteStorage(options.settings.databasePath);
  try {
    const sessions =
      options.search === undefined
        ? (await storage.sessions.listSessions(undefined, options.limit)).sessions
        : (await storage.sessions.findSession(options.search)).slice(0, options.limit);
    if (options.json) {
      for (const session of sessions) options.write(`${JSON.stringify(session)}\n`);
      return 0;
    }
    if (sessions.length === 0) {
      options.write(
        options.search === undefined ? 'No sessions yet.\n' : `No session mentions '${options.search}'.\n`,
      );
      return 0;
    }
    options.write(formatSessionTable({ sessions, columns: options.columns, color: options.color }));
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
    ['/skills', 'the skills loaded from .youyou/skills and ~/.youyou/skills; /NAME uses one'],
    ['/sessions', 'recent sessions (* marks this one)'],
    ['/resume ID', 'switch to a saved session (an id or a unique prefix)'],
    ['/compact [TEXT]', 'summarise the conversation so far now (TEXT: what the summary must keep)'],
    ['/new', 'start a new session (the current one is saved and its memories extracted)'],
    ['/reasoning', 'toggle showing the model’s reasoning in full instead of one summary line'],
    ['/exit', 'leave (also Ctrl-D at an empty prompt, or Ctrl-C twice)'],
  ];
  const lines = rows.map(([command, text]) => `${styles.cyan(command.padEnd(16))}${text}`);
  lines.push('', styles.dim('Ctrl-C cancels a running turn. ↑/↓ browse earlier prompts.'));
  return `${lines.join('\n')}\n`;
}
