/** The value checks shared by the config file's parts (config.ts, sandbox-config.ts). */

/** A bad configuration file or setting: shown as one line, exit code 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** A parsed JSON object. */
export type Json = Record<string, unknown>;

/** True for a JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `data[key]` when it is a non-empty string, undefined when absent; anything else is a ConfigError. */
export function optionalString(file: string, data: Json, key: string): string | undefined {
  const value = data[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    throw new ConfigError(`${file}: "${key}" must be a non-empty string`);
  return value;
}
