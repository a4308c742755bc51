import { AgentError, isAgentError } from '@youyou/agent';
import Database from 'better-sqlite3';

/** A rejection for bad arguments: the caller's mistake, never worth retrying. */
export function invalidInput(message: string): AgentError {
  return new AgentError({ code: 'INVALID_INPUT', message, sourceComponent: 'storage' });
}

/** A rejection for a bad option of `openSqliteStorage` (the claim settings among them). */
export function invalidConfig(message: string): AgentError {
  return new AgentError({ code: 'INVALID_CONFIG', message, sourceComponent: 'storage' });
}

/** The error of every call made after `close()`. */
export function closedError(path: string): AgentError {
  return new AgentError({
    code: 'STORAGE_ERROR',
    message: `the SQLite storage '${path}' is closed: open it again with openSqliteStorage`,
  });
}

/** The SQLite result code of an error thrown by better-sqlite3 (`SQLITE_BUSY`, `SQLITE_READONLY`, ...). */
export function sqliteCode(error: unknown): string | undefined {
  return error instanceof Database.SqliteError ? error.code : undefined;
}

/** True for the codes that mean "another connection holds a lock": waiting may fix them. */
export function isBusy(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** What to tell the caller for the result codes a host can do something about. */
function advice(code: string, context: { path: string; busyTimeoutMs: number; busyRetries: number }): string {
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    const retries = `${context.busyRetries} ${context.busyRetries === 1 ? 'retry' : 'retries'}`;
    return `the database stayed locked by another connection through the busy timeout (${context.busyTimeoutMs} ms) and ${retries}; try again, or look for a process holding a long write transaction on '${context.path}'`;
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return `the database '${context.path}' cannot be written: it was opened read-only, or the file, its folder or its -wal/-shm files are not writable`;
  }
  if (code === 'SQLITE_FULL') return 'the disk (or the database size limit) is full';
  if (code.startsWith('SQLITE_CANTOPEN')) {
    return `the database file '${context.path}' cannot be opened: check the path, that the file exists when opening it read-only, and that its folder is writable`;
  }
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return `'${context.path}' is damaged or is not an SQLite database: restore it from a backup`;
  }
  if (code.startsWith('SQLITE_IOERR')) return `an I/O error occurred on '${context.path}'`;
  return '';
}

/**
 * Wraps anything a storage operation threw as AgentError STORAGE_ERROR, saying which operation failed,
 * what SQLite said and, where it can, what to do. Lock errors are retryable; AgentErrors pass through.
 */
export function storageError(
  error: unknown,
  context: { operation: string; path: string; busyTimeoutMs: number; busyRetries: number },
): AgentError {
  if (isAgentError(error)) return error;
  const code = sqliteCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  const hint = code === undefined ? '' : advice(code, context);
  return new AgentError({
    code: 'STORAGE_ERROR',
    message: `${context.operation} failed: ${code === undefined ? '' : `${code}: `}${detail}${hint === '' ? '' : ` (${hint})`}`,
    retryable: isBusy(error),
    cause: error,
  });
}
