import path from 'node:path';
import { REPOSITORY } from '../../../../scripts/build-stale.mjs';
import { buildUnderLock } from '../../../../test-support/build-lock.js';

export { REPOSITORY };
/** The binary the end-to-end tests run. */
export const BIN = path.join(REPOSITORY, 'packages/cli/dist/bin.js');

/** Builds what `node packages/cli/dist/bin.js` needs (the same staleness rule as `npm run youyou`), once for all test files. */
export function ensureBuilt(): Promise<void> {
  return buildUnderLock();
}
