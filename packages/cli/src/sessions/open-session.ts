import type { Session } from '@youyou/agent';
import type { CliRuntime } from '../runtime/setup.js';
import { latestSessionId, recordWorkspace, resolveSessionId } from './workspace-sessions.js';

/**
 * Opens the session a run asks for: the one named (or with `fork` a new one carrying its history), the latest
 * of the workspace, or a new one (which records the workspace). A session another process runs rejects with
 * SESSION_BUSY (the storage's claim).
 */
export async function openSession(options: {
  runtime: CliRuntime;
  resume: string | undefined;
  latest: boolean;
  workspace: string;
  fork?: boolean;
}): Promise<Session> {
  const { runtime } = options;
  if (options.resume !== undefined) {
    const id = await resolveSessionId(runtime.sessions, options.resume);
    if (options.fork === true) return forkWorkspaceSession(runtime, id, options.workspace);
    return runtime.agent.resumeSession(id);
  }
  if (options.latest) {
    return runtime.agent.resumeSession(await latestSessionId(runtime.sessions, options.workspace));
  }
  return newWorkspaceSession(runtime, options.workspace);
}

/** A new session that records the workspace it was started in. */
export async function newWorkspaceSession(runtime: CliRuntime, workspace: string): Promise<Session> {
  const session = await runtime.agent.newSession();
  try {
    await recordWorkspace({ storage: runtime.sessions, sessionId: session.id, workspace });
  } catch (error) {
    await session.close();
    throw error;
  }
  return session;
}

/** A new session carrying the history of session `sourceId` (which stays as it was), recording the workspace. */
export async function forkWorkspaceSession(
  runtime: CliRuntime,
  sourceId: string,
  workspace: string,
): Promise<Session> {
  const session = await runtime.agent.forkSession(sourceId);
  try {
    await recordWorkspace({ storage: runtime.sessions, sessionId: session.id, workspace });
    runtime.checkpoints?.recordFork(sourceId, session.id);
  } catch (error) {
    await session.close();
    throw error;
  }
  return session;
}
