/** The config file's "checkpoints": off (`false`), or the size limits of what a checkpoint records. */
import { ConfigError, isRecord } from './values.js';

/** What `"checkpoints"` sets: `false` turns checkpoints off; the limits are in bytes. */
export type CheckpointFileConfig = false | { maxFileBytes?: number; maxTotalBytes?: number };

function limit(file: string, key: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ConfigError(`${file}: "checkpoints.${key}" must be a whole number of bytes, 0 or more`);
  }
  return value;
}

/** Checks `"checkpoints"` of a config file. */
export function parseCheckpointConfig(file: string, value: unknown): CheckpointFileConfig {
  if (value === false) return false;
  if (!isRecord(value)) {
    throw new ConfigError(
      `${file}: "checkpoints" must be false or an object with "maxFileBytes", "maxTotalBytes"`,
    );
  }
  for (const key of Object.keys(value)) {
    if (key !== 'maxFileBytes' && key !== 'maxTotalBytes') {
      throw new ConfigError(
        `${file}: "checkpoints.${key}" is not a setting (known: maxFileBytes, maxTotalBytes)`,
      );
    }
  }
  const maxFileBytes = limit(file, 'maxFileBytes', value.maxFileBytes);
  const maxTotalBytes = limit(file, 'maxTotalBytes', value.maxTotalBytes);
  return {
    ...(maxFileBytes === undefined ? {} : { maxFileBytes }),
    ...(maxTotalBytes === undefined ? {} : { maxTotalBytes }),
  };
}
