import type { Memory, MemoryStorage } from '@youyou/agent';
import { checkMemory, searchWordsOf } from '@youyou/agent/storage';
import type { SqliteConnection } from './connection.js';
import { invalidInput } from './errors.js';
import { codePointLength, ftsPhrase, indexedText, TRIGRAM_LENGTH } from './text.js';

type MemoryRow = [
  id: string,
  namespace: string,
  content: string,
  contentLower: string,
  category: string | null,
  createdAt: number,
  updatedAt: number,
  sourceSessionId: string | null,
];

const COLUMNS =
  'memory_id, namespace, content, content_lower, category, created_at, updated_at, source_session_id';

const SQL = {
  deleteById: 'DELETE FROM memories WHERE memory_id = ?',
  insert: `INSERT INTO memories (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  index: 'INSERT INTO memories_fts (rowid, content) VALUES (?, ?)',
  // LIMIT -1 is SQLite's "no limit".
  recent: `SELECT ${COLUMNS} FROM memories WHERE namespace = ?
    ORDER BY updated_at DESC, memory_id DESC LIMIT ?`,
  inNamespace: `SELECT ${COLUMNS} FROM memories WHERE namespace = ?`,
  candidates: `SELECT ${COLUMNS} FROM memories
    WHERE namespace = ? AND id IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)`,
} as const;

function memoryOf(row: MemoryRow): Memory {
  const [id, namespace, content, , category, createdAt, updatedAt, sourceSessionId] = row;
  const memory: Memory = {
    id,
    namespace,
    content,
    createdAt: new Date(createdAt),
    updatedAt: new Date(updatedAt),
  };
  if (category !== null) memory.category = category;
  if (sourceSessionId !== null) memory.sourceSessionId = sourceSessionId;
  return memory;
}

/** Most recently updated first, ties by id descending so the order is total. */
function compareRecentFirst(a: MemoryRow, b: MemoryRow): number {
  const difference = b[6] - a[6];
  if (difference !== 0) return difference;
  if (a[0] === b[0]) return 0;
  return a[0] > b[0] ? -1 : 1;
}

/**
 * A MemoryStorage on SQLite (made by `openSqliteStorage`), with the reference semantics: a query's words
 * (runs of letters, digits and marks) match memories containing any of them as a case-insensitive
 * substring; more distinct words matched rank first, then the most recently updated, then the id
 * descending. A query without words lists the namespace most recently updated first. When every word has
 * at least three characters the FTS5 trigram index picks the candidates; shorter words make it check
 * every memory of the namespace. Rejects with INVALID_INPUT for bad arguments, STORAGE_ERROR on failure.
 */
export class SqliteMemoryStorage implements MemoryStorage {
  readonly #connection: SqliteConnection;

  /** Made by `openSqliteStorage`. */
  constructor(connection: SqliteConnection) {
    this.#connection = connection;
  }

  /** Memories of `namespace`, best first; `limit` is an integer >= 0 or Infinity (the whole namespace). */
  async search(namespace: string, query: string, limit: number): Promise<Memory[]> {
    if (typeof namespace !== 'string') throw invalidInput('namespace must be a string');
    if (typeof query !== 'string') throw invalidInput('query must be a string');
    const unlimited = limit === Number.POSITIVE_INFINITY;
    if (!unlimited && (!Number.isInteger(limit) || limit < 0)) {
      throw invalidInput(`limit must be an integer of at least 0 or Infinity, got ${String(limit)}`);
    }
    if (limit === 0) return [];
    const words = searchWordsOf(query);
    const connection = this.#connection;
    if (words.length === 0) {
      const rows = await connection.read(`listing memories of '${namespace}'`, () =>
        connection
          .statement(SQL.recent)
          .raw()
          .all(namespace, unlimited ? -1 : limit),
      );
      return (rows as MemoryRow[]).map(memoryOf);
    }
    const indexed = words.every((word) => codePointLength(word) >= TRIGRAM_LENGTH);
    const rows = (await connection.read(`searching memories of '${namespace}'`, () =>
      indexed
        ? connection.statement(SQL.candidates).raw().all(namespace, words.map(ftsPhrase).join(' OR '))
        : connection.statement(SQL.inNamespace).raw().all(namespace),
    )) as MemoryRow[];
    const ranked = rows
      .map((row) => ({ row, score: words.filter((word) => row[3].includes(word)).length }))
      .filter((entry) => entry.score > 0)
      .sort((a, b) => b.score - a.score || compareRecentFirst(a.row, b.row));
    return (unlimited ? ranked : ranked.slice(0, limit)).map((entry) => memoryOf(entry.row));
  }

  /** Inserts, or replaces the memory with the same id (even one of another namespace), in one transaction. */
  async save(memory: Memory): Promise<void> {
    checkMemory(memory);
    const contentLower = memory.content.toLowerCase();
    const connection = this.#connection;
    await connection.write(`saving memory '${memory.id}'`, () => {
      connection.statement(SQL.deleteById).run(memory.id);
      const rowId = connection
        .statement(SQL.insert)
        .run(
          memory.id,
          memory.namespace,
          memory.content,
          contentLower,
          memory.category ?? null,
          memory.createdAt.getTime(),
          memory.updatedAt.getTime(),
          memory.sourceSessionId ?? null,
        ).lastInsertRowid;
      connection.statement(SQL.index).run(rowId, indexedText(contentLower));
    });
  }

  /** Removes a memory; an unknown id is not an error. */
  async delete(id: string): Promise<void> {
    if (typeof id !== 'string') throw invalidInput('id must be a string');
    const connection = this.#connection;
    await connection.write(`deleting memory '${id}'`, () => {
      connection.statement(SQL.deleteById).run(id);
    });
  }
}
