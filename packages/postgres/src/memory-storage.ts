import type { Memory, MemoryStorage } from '@youyou/agent';
import { checkMemory, searchWordsOf } from '@youyou/agent/storage';
import { decodeText, encodeText, searchForm, sortKey } from './codec.js';
import type { Database, Statement } from './database.js';
import { invalidInput } from './errors.js';

interface MemoryRow {
  id: string;
  namespace: string;
  content: string;
  category: string | null;
  source_session_id: string | null;
  created_at_ms: string;
  updated_at_ms: string;
}

/** A memory found by `searchRanked`, with its full-text rank. */
export interface RankedMemory extends Memory {
  /** The memory's `ts_rank` for the query; larger is better. */
  rank: number;
}

const COLUMNS = 'id, namespace, content, category, source_session_id, created_at_ms, updated_at_ms';

function memoryOf(row: MemoryRow): Memory {
  const memory: Memory = {
    id: decodeText(row.id),
    namespace: decodeText(row.namespace),
    content: decodeText(row.content),
    createdAt: new Date(Number(row.created_at_ms)),
    updatedAt: new Date(Number(row.updated_at_ms)),
  };
  if (row.category !== null) memory.category = decodeText(row.category);
  if (row.source_session_id !== null) memory.sourceSessionId = decodeText(row.source_session_id);
  return memory;
}

/** `limit` as SQL's LIMIT takes it: null (no limit) for Infinity; throws INVALID_INPUT for a bad one. */
function sqlLimit(limit: unknown): number | null {
  if (limit === Number.POSITIVE_INFINITY) return null;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0) {
    throw invalidInput(`limit must be an integer of at least 0 or Infinity, got ${String(limit)}`);
  }
  return limit;
}

/**
 * A MemoryStorage on PostgreSQL, with the reference semantics: a non-empty query matches memories whose
 * content contains any of its words (a literal, case-insensitive substring, so `test` finds `tests` and
 * words of scripts written without spaces are found); more distinct words matched rank first, then the
 * most recently updated, then the id (descending). A query without words lists the namespace most
 * recently updated first. Every method rejects with AgentError INVALID_INPUT or STORAGE_ERROR.
 */
export class PostgresMemoryStorage implements MemoryStorage {
  readonly #database: Database;
  readonly #sql: Record<'recent' | 'byWords' | 'save' | 'delete' | 'ranked', Statement>;

  /** Made by `openPostgresStorage`. */
  constructor(options: { database: Database }) {
    this.#database = options.database;
    const { memories } = this.#database.tables;
    this.#sql = {
      recent: {
        text: `SELECT ${COLUMNS} FROM ${memories} WHERE namespace = $1
                ORDER BY updated_at_ms DESC, sort_key DESC LIMIT $2`,
      },
      // $2: the words, $3: a LIKE pattern per word, $4: the limit. Words hold only letters, digits and
      // combining marks, so they need no LIKE escaping and their search form is the word itself.
      byWords: {
        text: `SELECT ${COLUMNS} FROM (
                 SELECT m.*, (SELECT count(*) FROM unnest($2::text[]) AS w(word)
                               WHERE strpos(m.content_search, w.word) > 0) AS score
                   FROM ${memories} m
                  WHERE m.namespace = $1 AND m.content_search LIKE ANY ($3::text[])
               ) matched
               ORDER BY score DESC, updated_at_ms DESC, sort_key DESC LIMIT $4`,
      },
      save: {
        text: `INSERT INTO ${memories} (id, sort_key, namespace, content, content_search, category,
                 source_session_id, created_at_ms, updated_at_ms)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
               ON CONFLICT (id) DO UPDATE SET
                 namespace = EXCLUDED.namespace, content = EXCLUDED.content,
                 content_search = EXCLUDED.content_search, category = EXCLUDED.category,
                 source_session_id = EXCLUDED.source_session_id,
                 created_at_ms = EXCLUDED.created_at_ms, updated_at_ms = EXCLUDED.updated_at_ms`,
      },
      delete: { text: `DELETE FROM ${memories} WHERE id = $1` },
      ranked: {
        text: `SELECT ${COLUMNS}, ts_rank(search_vector, q.query) AS rank
                 FROM ${memories}, to_tsquery('simple', array_to_string($2::text[], ' | ')) AS q(query)
                WHERE namespace = $1 AND search_vector @@ q.query
                ORDER BY rank DESC, updated_at_ms DESC, sort_key DESC LIMIT $3`,
      },
    };
  }

  /** Memories of `namespace`, best first; `limit` is an integer >= 0 or Infinity (the whole namespace). */
  async search(namespace: string, query: string, limit: number): Promise<Memory[]> {
    if (typeof namespace !== 'string') throw invalidInput('namespace must be a string');
    if (typeof query !== 'string') throw invalidInput('query must be a string');
    const rowLimit = sqlLimit(limit);
    if (rowLimit === 0) return [];
    const words = searchWordsOf(query);
    const context = `searching memories of namespace '${namespace}' failed`;
    const result =
      words.length === 0
        ? await this.#database.query<MemoryRow>({
            statement: this.#sql.recent,
            values: [encodeText(namespace), rowLimit],
            context,
          })
        : await this.#database.query<MemoryRow>({
            statement: this.#sql.byWords,
            values: [encodeText(namespace), words, words.map((word) => `%${word}%`), rowLimit],
            context,
          });
    return result.rows.map(memoryOf);
  }

  /** Inserts, or replaces the memory with the same id (even one of another namespace). */
  async save(memory: Memory): Promise<void> {
    checkMemory(memory);
    await this.#database.query({
      statement: this.#sql.save,
      values: [
        encodeText(memory.id),
        sortKey(memory.id),
        encodeText(memory.namespace),
        encodeText(memory.content),
        searchForm(memory.content),
        memory.category === undefined ? null : encodeText(memory.category),
        memory.sourceSessionId === undefined ? null : encodeText(memory.sourceSessionId),
        memory.createdAt.getTime(),
        memory.updatedAt.getTime(),
      ],
      context: `saving memory '${memory.id}' failed`,
    });
  }

  /** Removes a memory; an unknown id is not an error. */
  async delete(id: string): Promise<void> {
    if (typeof id !== 'string') throw invalidInput('id must be a string');
    await this.#database.query({
      statement: this.#sql.delete,
      values: [encodeText(id)],
      context: `deleting memory '${id}' failed`,
    });
  }

  /**
   * Full-text search in PostgreSQL's sense, beyond the port: memories of the namespace holding any whole
   * word of the query ('simple' configuration, no stemming), best `ts_rank` first.
   */
  async searchRanked(namespace: string, query: string, limit = 20): Promise<RankedMemory[]> {
    if (typeof namespace !== 'string') throw invalidInput('namespace must be a string');
    if (typeof query !== 'string') throw invalidInput('query must be a string');
    const rowLimit = sqlLimit(limit);
    const words = searchWordsOf(query);
    if (words.length === 0 || rowLimit === 0) return [];
    const result = await this.#database.query<MemoryRow & { rank: number }>({
      statement: this.#sql.ranked,
      values: [encodeText(namespace), words, rowLimit],
      context: `searching memories of namespace '${namespace}' failed`,
    });
    return result.rows.map((row) => ({ ...memoryOf(row), rank: row.rank }));
  }
}
