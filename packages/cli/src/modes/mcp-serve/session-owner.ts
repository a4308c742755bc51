import type { CliRuntime } from '../../runtime/setup.js';
import { CommandError, workspacesOf } from '../../sessions/workspace-sessions.js';
import { neutralizeLine } from '../../text/terminal-text.js';

/** The metadata key under which a session started over MCP's HTTP records the tenant of the caller's token. */
export const MCP_TENANT_METADATA_KEY = 'youyou_cli_mcp_tenant';

/** Records the tenant that started a session over HTTP (stdio callers have none: nothing is recorded). */
export async function recordSessionOwner(options: {
  runtime: CliRuntime;
  sessionId: string;
  tenant: string | undefined;
}): Promise<void> {
  if (options.tenant === undefined) return;
  await options.runtime.sessions.saveEvent(options.sessionId, {
    timestamp: new Date(),
    payload: { type: 'metadata', key: MCP_TENANT_METADATA_KEY, value: options.tenant },
  });
}

/**
 * Checks that a caller may continue `sessionId`: the whole id (never a prefix, which would let a caller guess
 * its way through the ids), a session of this workspace, and over HTTP one its own tenant started. Every
 * refusal says the same, so a caller learns nothing of sessions it may not use.
 */
export async function checkSessionOwner(options: {
  runtime: CliRuntime;
  sessionId: string;
  workspace: string;
  tenant: string | undefined;
}): Promise<void> {
  const { runtime, sessionId } = options;
  const unknown = new CommandError(
    `no session of this workspace has the id '${neutralizeLine(sessionId)}'; pass the sessionId of an earlier answer, or omit it to start a new session`,
  );
  const summary = (await runtime.sessions.findSession(sessionId)).find(
    (session) => session.sessionId === sessionId,
  );
  if (summary === undefined) throw unknown;
  const workspaces = await workspacesOf(runtime.sessions, [summary]);
  if (workspaces.get(sessionId) !== options.workspace) throw unknown;
  if (options.tenant === undefined) return;
  const owners = await runtime.sessions.metadataOf([sessionId], MCP_TENANT_METADATA_KEY);
  if (owners.get(sessionId) !== options.tenant) throw unknown;
}
