import { buildUnderLock } from '../../../../test-support/build-lock.js';

/** Builds the stale dist of agent, postgres and server that the server child processes run. */
export function ensureServerBuilt(): Promise<void> {
  return buildUnderLock(['agent', 'postgres', 'server']);
}
