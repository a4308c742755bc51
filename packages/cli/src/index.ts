/**
 * @youyou/cli — the `youyou` terminal agent. The binary is `dist/bin.js`; `run` is the same program for
 * embedding it (tests, wrappers): it takes the arguments and streams and resolves with the exit code.
 */
export {
  type ApprovalAnswer,
  type ApprovalGate,
  type ApprovalPolicy,
  createApprovalGate,
  createDenyRulesPlugin,
  mutatingToolNames,
} from './approval/policy.js';
export { type CliSettings, resolveSettings } from './config/config.js';
export { type FileConfig, validateFileConfig } from './config/schema.js';
export { type RunOptions, run } from './main.js';
export { createWorkspaceTools, type WorkspaceToolsOptions } from './tools/index.js';
