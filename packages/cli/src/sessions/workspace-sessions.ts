import type { SessionStorage, SessionSummary } from '@youyou/agent';
import type { SqliteSessionStorage } from '@youyou/sqlite';
import { neutralizeLine } from '../text/terminal-text.js';

/**
 * The metadata key under which a session records the workspace it was started in. A host's keys are
 * spelled `youyou_<host>_<name>`, as the server's `youyou_server_tenant`, in the core's snake case.
 */
export const WORKSPACE_METADATA_KEY = 'youyou_cli_workspace';

/** The key's spelling before it joined the server's: sessions saved with it keep their workspace. */
const OLD_WORKSPACE_METADATA_KEY = 'youyou.workspace';

/** How many sessions `--continue` reads at a time while it looks for the latest one of the workspace. */
const CONTINUE_PAGE_SIZE = 50;

/** A failure of a command that is nobody's mistake in the arguments (an unknown session): exit code 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

/** The short form of a session id shown in listings; `resume` accepts it. */
export function shortId(sessionId: string): string {
  return sessionId.slice(0, 8);
}

/** The workspaces the sessions were started in (sessions from before workspaces were recorded have none). */
export async function workspacesOf(
  storage: SqliteSessionStorage,
  sessions: readonly SessionSummary[],
): Promise<Map<string, string>> {
  const ids = sessions.map((session) => session.sessionId);
  const workspaces = new Map<string, string>();
  for (const [sessionId, value] of await storage.metadataOf(ids, WORKSPACE_METADATA_KEY)) {
    if (typeof value === 'string') workspaces.set(sessionId, value);
  }
  const unrecorded = ids.filter((sessionId) => !workspaces.has(sessionId));
  if (unrecorded.length === 0) return workspaces;
  for (const [sessionId, value] of await storage.metadataOf(unrecorded, OLD_WORKSPACE_METADATA_KEY)) {
    if (typeof value === 'string') workspaces.set(sessionId, value);
  }
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
