import path from 'node:path';
import { type CliSettings, ConfigError } from '../config/config.js';
import {
  findExecutable,
  probeSandbox,
  type ShellSandbox,
  sandboxUnavailableText,
} from '../sandbox/sandbox.js';

/**
 * The sandbox the shell runs in. When bubblewrap cannot start, this throws a ConfigError of one line saying
 * how to fix it, unless the user chose to run unconfined then (`sandbox.allowUnconfined`): a warning then.
 */
export function chooseSandbox(options: {
  settings: CliSettings;
  env: NodeJS.ProcessEnv;
  warn: (text: string) => void;
}): ShellSandbox {
  const { sandbox } = options.settings;
  // A bare name is looked up on the user's PATH once, so that the probe and every command run the same file.
  const bwrap = sandbox.bwrapPath.includes('/')
    ? path.resolve(sandbox.bwrapPath)
    : findExecutable({ name: sandbox.bwrapPath, env: options.env });
  const chosen: ShellSandbox = {
    mode: sandbox.mode,
    network: sandbox.mode === 'danger-full-access' || sandbox.network,
    bwrapPath: bwrap ?? sandbox.bwrapPath,
    hiddenPaths: sandbox.hiddenPaths,
    limits: sandbox.limits,
  };
  if (chosen.mode === 'danger-full-access') {
    options.warn('sandbox mode danger-full-access: the shell runs unconfined, with network access');
    return chosen;
  }
  const probe =
    bwrap === undefined
      ? { ok: false as const, reason: `${sandbox.bwrapPath} is not installed (not found on PATH)` }
      : probeSandbox({ sandbox: chosen, workspaceRoot: options.settings.cwd });
  if (probe.ok) return chosen;
  if (!sandbox.allowUnconfined) throw new ConfigError(sandboxUnavailableText(probe.reason));
  options.warn(`${probe.reason}; the shell runs unconfined (sandbox.allowUnconfined is set in config.json)`);
  return { ...chosen, mode: 'danger-full-access', network: true };
}
