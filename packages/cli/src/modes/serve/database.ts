import type { AgentError } from '@youyou/agent';
// Types only: PostgreSQL (and pg) load only when serve is given a database URL.
import type { PostgresSessionStorage } from '@youyou/postgres';
import { ConfigError } from '../../config/values.js';
import type { RuntimeStorage } from '../../runtime/setup.js';
import { CommandError } from '../../sessions/workspace-sessions.js';

/** A PostgreSQL URL for `youyou serve`, checked, with what may be shown of it and what must never be. */
export interface DatabaseTarget {
  /** The URL as given, for the driver only: it may hold a password. */
  readonly url: string;
  /** `host:port/database`: what the banner and messages show. */
  readonly where: string;
  /** The password in its forms (as written and decoded), to cut out of any text before it is shown. */
  readonly secrets: readonly string[];
}

/** Where a database URL came from, for messages: the flag, the variable or the config key. */
export type DatabaseUrlSource = '--database-url' | 'YOUYOU_DATABASE_URL' | 'server.databaseUrl';

function decoded(text: string, source: DatabaseUrlSource): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ConfigError(`${source} has a malformed %-escape; write its characters as %XX`);
  }
}

/**
 * Checks a `postgres://` (or `postgresql://`) URL without ever quoting it back: a bad one is a ConfigError
 * that names its source and says what is wrong.
 */
export function databaseTarget(url: string, source: DatabaseUrlSource): DatabaseTarget {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new ConfigError(
      `${source} is not a URL; write it as postgres://user:password@host:5432/database (the password %-encoded)`,
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new ConfigError(`${source} must start with postgres:// or postgresql://`);
  }
  const secrets = new Set<string>();
  for (const raw of [parsed.password, parsed.searchParams.get('password') ?? '']) {
    if (raw === '') continue;
    secrets.add(raw);
    secrets.add(decoded(raw, source));
    secrets.add(encodeURIComponent(decoded(raw, source)));
  }
  decoded(parsed.username, source);
  const database = decoded(parsed.pathname.replace(/^\//, ''), source);
  // No host means the driver's default (a local socket, or the host=… parameter).
  const host = parsed.host === '' ? (parsed.searchParams.get('host') ?? 'localhost') : parsed.host;
  return {
    url: url.trim(),
    where: `${host}/${database === '' ? '(default database)' : database}`,
    secrets: [...secrets].sort((left, right) => right.length - left.length),
  };
}

/** The text with every form of the target's password, and the URL itself, replaced by `***`. */
export function redacted(text: string, target: DatabaseTarget): string {
  let safe = text.split(target.url).join('***');
  for (const secret of target.secrets) safe = safe.split(secret).join('***');
  return safe;
}

/**
 * Opens the PostgreSQL storages of `youyou serve`: sessions and memories in `schema`, migrated on open,
 * with NOTIFY after each saved event so that `/sessions/:id/log` on every process wakes at once; the
 * Agent takes each session's lease, so one process runs a session's turn at a time. A database that
 * cannot be reached or migrated is a CommandError of one line naming host and database, never the password
 * (`onBackgroundError` should pass its texts through `redacted` too).
 */
export async function openServeDatabase(options: {
  target: DatabaseTarget;
  schema: string;
  onBackgroundError: (error: AgentError) => void;
}): Promise<RuntimeStorage<PostgresSessionStorage>> {
  const { target } = options;
  const { openPostgresStorage } = await import('@youyou/postgres');
  try {
    return await openPostgresStorage({
      connectionString: target.url,
      schema: options.schema,
      eventNotifications: true,
      onBackgroundError: options.onBackgroundError,
    });
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    // The package's own code prefix ("[STORAGE_ERROR] ") says nothing the sentence does not.
    const reason = redacted(text, target).replace(/^\[[A-Z_]+\] /, '');
    throw new CommandError(`cannot open PostgreSQL at ${target.where}: ${reason}`);
  }
}
