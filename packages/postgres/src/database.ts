import { createHash } from 'node:crypto';
import { AgentError } from '@youyou/agent';
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { storageError } from './errors.js';

/** A schema name `openPostgresStorage` accepts: an identifier PostgreSQL keeps as written once quoted. */
export const SCHEMA_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `name` as a quoted SQL identifier (doubling any `"`), for names that cannot be query parameters. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The schema-qualified, quoted names of the tables, written into SQL text once per storage. */
export interface Tables {
  schema: string;
  version: string;
  sessions: string;
  activity: string;
  events: string;
  search: string;
  memories: string;
  leases: string;
}

/** The table names of a schema; the schema name must match SCHEMA_NAME_PATTERN. */
export function tablesOf(schema: string): Tables {
  const qualified = (table: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
  return {
    schema: quoteIdentifier(schema),
    version: qualified('youyou_schema_version'),
    sessions: qualified('youyou_sessions'),
    activity: qualified('youyou_session_activity'),
    events: qualified('youyou_session_events'),
    search: qualified('youyou_session_search'),
    memories: qualified('youyou_memories'),
    leases: qualified('youyou_session_leases'),
  };
}

/** One statement: its SQL text and, for hot paths, a prepared-statement name. */
export interface Statement {
  text: string;
  name?: string;
}

/**
 * A prepared-statement name unique to a schema and a statement, so that two storages on different
 * schemas that share a pool never give one name two texts.
 */
export function statementName(schema: string, label: string): string {
  const digest = createHash('sha1').update(schema).digest('hex').slice(0, 12);
  return `youyou_${digest}_${label}`;
}

/** Runs one statement inside `Database.transaction`. */
export type TransactionQuery = <Row extends QueryResultRow>(
  statement: Statement,
  values: unknown[],
) => Promise<QueryResult<Row>>;

/**
 * The pool as the storages use it: every failure becomes AgentError STORAGE_ERROR, and a call after
 * `close()` is refused.
 */
export class Database {
  readonly pool: Pool;
  readonly tables: Tables;
  readonly schemaName: string;
  readonly #preparedStatements: boolean;
  #closed = false;

  constructor(options: { pool: Pool; schema: string; preparedStatements: boolean }) {
    this.pool = options.pool;
    this.schemaName = options.schema;
    this.tables = tablesOf(options.schema);
    this.#preparedStatements = options.preparedStatements;
  }

  /** True once the storage has been closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Marks the storage closed; later calls reject with STORAGE_ERROR. */
  markClosed(): void {
    this.#closed = true;
  }

  /** Runs one statement on any pooled connection; `context` says what failed in the error message. */
  async query<Row extends QueryResultRow>(options: {
    statement: Statement;
    values: unknown[];
    context: string;
  }): Promise<QueryResult<Row>> {
    this.assertOpen(options.context);
    try {
      return await this.pool.query<Row>(this.#config(options.statement, options.values));
    } catch (error) {
      throw storageError(error, options.context);
    }
  }

  /**
   * Runs `body` in one transaction on one pooled connection: committed when it resolves, rolled back
   * when it or the commit fails (then it rejects with STORAGE_ERROR). For the rare operations that need
   * a fresh snapshot after taking a lock, which one statement cannot have.
   */
  async transaction<T>(context: string, body: (query: TransactionQuery) => Promise<T>): Promise<T> {
    this.assertOpen(context);
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storageError(error, context);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await body(<Row extends QueryResultRow>(statement: Statement, values: unknown[]) =>
        client.query<Row>(this.#config(statement, values)),
      );
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        // A connection that cannot even roll back is not given back to the pool.
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      }
      throw storageError(error, context);
    } finally {
      client.release(broken);
    }
  }

  #config(statement: Statement, values: unknown[]): { name?: string; text: string; values: unknown[] } {
    return statement.name === undefined || !this.#preparedStatements
      ? { text: statement.text, values }
      : { name: statement.name, text: statement.text, values };
  }

  private assertOpen(context: string): void {
    if (this.#closed) {
      throw new AgentError({
        code: 'STORAGE_ERROR',
        message: `${context}: the PostgreSQL storage has been closed`,
        sourceComponent: 'storage',
      });
    }
  }
}
