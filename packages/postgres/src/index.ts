/**
 * @youyou/postgres — session and memory storage for YouYou Agent on PostgreSQL, with session leases so
 * that many app servers can share one database without two of them running the same session.
 */
export { isRetryableDatabaseError } from './errors.js';
export type { PositionedSessionEvent } from './event-feed.js';
export type { AcquireLeaseOptions, LeaseHolder, LeaseOptions, SessionLease } from './lease.js';
export { PostgresMemoryStorage, type RankedMemory } from './memory-storage.js';
export {
  type MigrateOptions,
  type MigrationResult,
  migratePostgresSchema,
  SCHEMA_VERSION,
} from './migrations.js';
export { openPostgresStorage, type PostgresStorage, type PostgresStorageOptions } from './open.js';
export { PostgresSessionStorage, type RankedSessionSummary } from './session-storage.js';
