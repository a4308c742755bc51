/**
 * The config file's `sandbox` object and how it resolves with the flags. config.ts imports this module, and
 * this one uses config.ts's helpers only inside functions, so the cycle is harmless.
 */
import path from 'node:path';
import { DEFAULT_RESOURCE_LIMITS, type ResourceLimits } from '../sandbox/limits.js';
import {
  DEFAULT_SANDBOX_MODE,
  SANDBOX_MODES,
  type SandboxMode,
  SECRET_HOME_PATHS,
} from '../sandbox/sandbox.js';
import type { FlagSettings } from './args.js';
import { ConfigError, isRecord, optionalString } from './values.js';

/** `sandbox` of the config file. */
export interface SandboxFileConfig {
  mode?: SandboxMode;
  /** Shell commands may use the network. */
  network?: boolean;
  /** When bubblewrap cannot start, run the shell unconfined (with a warning) instead of refusing to start. */
  allowUnconfined?: boolean;
  /** The bubblewrap executable (default `bwrap` on PATH). */
  bwrapPath?: string;
  /** More paths to hide from the shell, besides the built-in list; `~/` is the home folder. */
  hiddenPaths?: string[];
  /** Limits on each command; a key left out keeps its default, `null` turns it off. */
  limits?: Partial<ResourceLimits>;
}

/** How the shell is confined, resolved from `--sandbox`, `--allow-network` and the config file. */
export interface SandboxSettings {
  mode: SandboxMode;
  network: boolean;
  allowUnconfined: boolean;
  bwrapPath: string;
  /** Absolute paths: the built-in secret paths of the home folder, YOUYOU_HOME and the config's. */
  hiddenPaths: string[];
  limits: ResourceLimits;
}

const SANDBOX_KEYS = new Set(['mode', 'network', 'allowUnconfined', 'bwrapPath', 'hiddenPaths', 'limits']);
const LIMIT_KEYS = ['fileSizeBytes', 'processes', 'cpuSeconds'] as const;

/** Checks `sandbox.limits`: each a positive whole number, or null for no limit. */
function parseLimits(file: string, value: unknown): Partial<ResourceLimits> {
  if (!isRecord(value)) throw new ConfigError(`${file}: "sandbox.limits" must be an object`);
  const known = new Set<string>(LIMIT_KEYS);
  for (const key of Object.keys(value)) {
    if (!known.has(key)) {
      throw new ConfigError(`${file}: unknown key "sandbox.limits.${key}" (known: ${LIMIT_KEYS.join(', ')})`);
    }
  }
  const limits: Partial<ResourceLimits> = {};
  for (const key of LIMIT_KEYS) {
    const limit = value[key];
    if (limit === undefined) continue;
    if (limit !== null && !(Number.isSafeInteger(limit) && (limit as number) >= 1)) {
      throw new ConfigError(
        `${file}: "sandbox.limits.${key}" must be a whole number of at least 1, or null for no limit`,
      );
    }
    limits[key] = limit as number | null;
  }
  return limits;
}

/** Checks the config file's `sandbox` object. */
export function parseSandboxConfig(file: string, value: unknown): SandboxFileConfig {
  if (!isRecord(value)) throw new ConfigError(`${file}: "sandbox" must be an object`);
  for (const key of Object.keys(value)) {
    if (!SANDBOX_KEYS.has(key)) {
      throw new ConfigError(`${file}: unknown key "sandbox.${key}" (known: ${[...SANDBOX_KEYS].join(', ')})`);
    }
  }
  const sandbox: SandboxFileConfig = {};
  if (value.mode !== undefined) {
    if (typeof value.mode !== 'string' || !(SANDBOX_MODES as readonly string[]).includes(value.mode)) {
      throw new ConfigError(`${file}: "sandbox.mode" must be one of ${SANDBOX_MODES.join(', ')}`);
    }
    sandbox.mode = value.mode as SandboxMode;
  }
  for (const key of ['network', 'allowUnconfined'] as const) {
    const flag = value[key];
    if (flag === undefined) continue;
    if (typeof flag !== 'boolean') throw new ConfigError(`${file}: "sandbox.${key}" must be true or false`);
    sandbox[key] = flag;
  }
  const bwrapPath = optionalString(file, value, 'bwrapPath');
  if (bwrapPath !== undefined) sandbox.bwrapPath = bwrapPath;
  const hidden = value.hiddenPaths;
  if (hidden !== undefined) {
    if (!Array.isArray(hidden) || !hidden.every((entry) => typeof entry === 'string' && entry !== '')) {
      throw new ConfigError(`${file}: "sandbox.hiddenPaths" must be an array of paths`);
    }
    sandbox.hiddenPaths = hidden as string[];
  }
  if (value.limits !== undefined) sandbox.limits = parseLimits(file, value.limits);
  return sandbox;
}

/** The sandbox settings: the flags over the config file over the defaults. */
export function resolveSandbox(options: {
  flags: FlagSettings;
  file: SandboxFileConfig;
  userHome: string;
  youyouHome: string;
}): SandboxSettings {
  const { flags, file, userHome } = options;
  const expand = (entry: string): string =>
    entry === '~' || entry.startsWith('~/') ? path.join(userHome, entry.slice(1)) : path.resolve(entry);
  return {
    mode: flags.sandbox ?? file.mode ?? DEFAULT_SANDBOX_MODE,
    network: flags.allowNetwork === true || file.network === true,
    allowUnconfined: file.allowUnconfined === true,
    bwrapPath: file.bwrapPath ?? 'bwrap',
    hiddenPaths: [
      ...SECRET_HOME_PATHS.map((entry) => path.join(userHome, entry)),
      options.youyouHome,
      ...(file.hiddenPaths ?? []).map(expand),
    ],
    limits: { ...DEFAULT_RESOURCE_LIMITS, ...file.limits },
  };
}
