import type { Session } from '@youyou/agent';
import type { CliRuntime } from '../runtime/setup.js';
import { latestSessionId, recordWorkspace, resolveSessionId } from './workspace-sessions.js';

/**
 * Opens the session a run asks for: the one named, the latest of the workspace, or a new one (which
 * records the workspace). A session another process runs rejects with SESSION_BUSY (the storage's claim).
 */
export async function openSession(options: {
  runtime: CliRuntime;
  resume: string | undefined;
  latest: boolean;
  workspace: string;
}): Promise<Session> {
  const { runtime } = options;
  if (options.resume !== undefined) {
    return runtime.agent.resumeSession(await resolveSessionId(runtime.sessions, options.resume));
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
