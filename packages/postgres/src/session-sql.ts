import { type Statement, statementName, type Tables } from './database.js';
import { VECTOR_INPUT_CHARS } from './migrations.js';

/** The columns of a SessionSummary, from `activity a JOIN sessions s`. */
const SUMMARY_COLUMNS = 'a.session_id, s.title, s.created_at_ms, a.updated_at_ms, a.message_count';

/** The statements of PostgresSessionStorage, by what they do. */
export type SessionStatements = Record<
  | 'upsert'
  | 'saveBatch'
  | 'appendBatch'
  | 'lastWrite'
  | 'load'
  | 'firstPage'
  | 'nextPage'
  | 'find'
  | 'texts'
  | 'ranked'
  | 'deleteActivity'
  | 'deleteRest',
  Statement
> & {
  /** `append[leased][titled]`: see `appendStatement`. */
  append: readonly [readonly [Statement, Statement], readonly [Statement, Statement]];
};

/**
 * The SQL of the session storage. Message text reaches the search indexes (`youyou_session_search`) in a
 * background pass; each session's `indexed_seq` says how far. The searches read the index up to it and
 * the events after it directly (the partial index `youyou_session_activity_unindexed` finds those
 * sessions), so they are exact at every moment.
 */
export function sessionStatements(tables: Tables, schema: string): SessionStatements {
  const { sessions, activity, events, search, leases } = tables;
  const name = (label: string) => statementName(schema, label);
  const order = 'ORDER BY a.updated_at_ms DESC, a.sort_key DESC';
  const append = (leased: boolean, titled: boolean): Statement => ({
    name: name(`append${leased ? '_leased' : ''}${titled ? '_titled' : ''}`),
    text: appendStatement(tables, leased, titled),
  });
  return {
    append: [
      [append(false, false), append(false, true)],
      [append(true, false), append(true, true)],
    ],
    // What a save does when `append` did not: the first event of a session, a retry of a save that did
    // commit, a lease check after the activity row named another holder. $1 id, $2 sort key, $3 id search
    // form, $4/$5 title and its search form (user messages), $6 time, $7 messages (0 or 1), $8 write id,
    // $9 type, $10 payload, $11 search text, $12 lease token. The lease row's share lock makes a takeover
    // wait for this write (fencing); a leased write leaves its token on the activity row for `append`.
    upsert: {
      name: name('save_event'),
      text: `WITH lease AS (
               SELECT 1 FROM ${leases} WHERE session_id = $1 AND token = $12::uuid FOR SHARE
             ), activity AS (
               INSERT INTO ${activity} AS a (session_id, sort_key, updated_at_ms, message_count, event_count,
                 last_write_id, lease_token)
               SELECT $1::text, $2::bytea, $6::bigint, $7::integer, 1, $8::uuid, $12::uuid
                WHERE $12::uuid IS NULL OR EXISTS (SELECT 1 FROM lease)
               ON CONFLICT (session_id) DO UPDATE SET
                 updated_at_ms = EXCLUDED.updated_at_ms,
                 message_count = a.message_count + EXCLUDED.message_count,
                 event_count = a.event_count + 1,
                 last_write_id = EXCLUDED.last_write_id,
                 lease_token = COALESCE(EXCLUDED.lease_token, a.lease_token)
               WHERE a.last_write_id IS DISTINCT FROM EXCLUDED.last_write_id
               RETURNING a.event_count
             ), session AS (
               INSERT INTO ${sessions} AS s (session_id, id_search, title, title_search, created_at_ms)
               SELECT $1::text, $3::text, $4::text, $5::text, $6::bigint FROM activity
                WHERE event_count = 1 OR $4::text IS NOT NULL
               ON CONFLICT (session_id) DO UPDATE SET title = EXCLUDED.title, title_search = EXCLUDED.title_search
               WHERE s.title IS NULL AND EXCLUDED.title IS NOT NULL
             ), inserted AS (
               INSERT INTO ${events} (session_id, seq, timestamp_ms, payload_type, payload, search_text)
               SELECT $1::text, event_count, $6::bigint, $9::text, $10::text, $11::text FROM activity
               RETURNING seq
             )
             SELECT ($12::uuid IS NULL OR EXISTS (SELECT 1 FROM lease)) AS leased,
                    (SELECT count(*) FROM inserted)::integer AS inserted`,
    },
    // `upsert` for several events in one statement (so one implicit transaction: all or none). $1 id, $2 sort
    // key, $3 id search form, $4/$5 the title of the batch's first user message and its search form, $6 the
    // first event's time, $7 the last one's, $8 how many are messages, $9 the events' write ids, $10 types,
    // $11 payloads, $12 search texts, $13 times, $14 lease token, $15 the number of events. The activity row
    // keeps the last write id; when it is any of the batch's (a retry of a batch or a save that did commit),
    // nothing is written and the caller works out what is left (see `saveEvents`).
    saveBatch: {
      name: name('save_events'),
      text: `WITH lease AS (
               SELECT 1 FROM ${leases} WHERE session_id = $1 AND token = $14::uuid FOR SHARE
             ), activity AS (
               INSERT INTO ${activity} AS a (session_id, sort_key, updated_at_ms, message_count, event_count,
                 last_write_id, lease_token)
               SELECT $1::text, $2::bytea, $7::bigint, $8::integer, $15::integer, ($9::uuid[])[$15], $14::uuid
                WHERE $14::uuid IS NULL OR EXISTS (SELECT 1 FROM lease)
               ON CONFLICT (session_id) DO UPDATE SET
                 updated_at_ms = EXCLUDED.updated_at_ms,
                 message_count = a.message_count + EXCLUDED.message_count,
                 event_count = a.event_count + EXCLUDED.event_count,
                 last_write_id = EXCLUDED.last_write_id,
                 lease_token = COALESCE(EXCLUDED.lease_token, a.lease_token)
               WHERE a.last_write_id IS NULL OR a.last_write_id <> ALL ($9::uuid[])
               RETURNING a.event_count
             ), session AS (
               INSERT INTO ${sessions} AS s (session_id, id_search, title, title_search, created_at_ms)
               SELECT $1::text, $3::text, $4::text, $5::text, $6::bigint FROM activity
                WHERE event_count = $15::integer OR $4::text IS NOT NULL
               ON CONFLICT (session_id) DO UPDATE SET title = EXCLUDED.title, title_search = EXCLUDED.title_search
               WHERE s.title IS NULL AND EXCLUDED.title IS NOT NULL
             ), inserted AS (
               INSERT INTO ${events} (session_id, seq, timestamp_ms, payload_type, payload, search_text)
               SELECT $1::text, a.event_count - $15::integer + e.position, e.at, e.kind, e.body, e.search
                 FROM activity a CROSS JOIN unnest($13::bigint[], $10::text[], $11::text[], $12::text[])
                      WITH ORDINALITY AS e(at, kind, body, search, position)
               RETURNING seq
             )
             SELECT ($14::uuid IS NULL OR EXISTS (SELECT 1 FROM lease)) AS leased,
                    (SELECT count(*) FROM inserted)::integer AS inserted`,
    },
    // `append` for several events (see `appendStatement`): moves an existing activity row on by the batch and
    // inserts its events, or does nothing, so that `saveBatch` runs. $1 id, $2 the last event's time, $3 how
    // many are messages, $4 write ids, $5 types, $6 payloads, $7 search texts, $8 times, $9 the number of
    // events, $10 the lease token or null, $11/$12 the title of the batch's first user message and its
    // search form, or nulls.
    appendBatch: {
      name: name('append_events'),
      text: `WITH moved AS (
               UPDATE ${activity} a SET updated_at_ms = $2::bigint, message_count = a.message_count + $3::integer,
                      event_count = a.event_count + $9::integer, last_write_id = ($4::uuid[])[$9]
                WHERE a.session_id = $1::text AND (a.last_write_id IS NULL OR a.last_write_id <> ALL ($4::uuid[]))
                  AND ($10::uuid IS NULL OR a.lease_token = $10::uuid)
               RETURNING a.event_count
             ), titled AS (
               UPDATE ${sessions} s SET title = $11::text, title_search = $12::text
                 FROM moved WHERE $11::text IS NOT NULL AND s.session_id = $1::text AND s.title IS NULL
             )
             INSERT INTO ${events} (session_id, seq, timestamp_ms, payload_type, payload, search_text)
             SELECT $1::text, m.event_count - $9::integer + e.position, e.at, e.kind, e.body, e.search
               FROM moved m CROSS JOIN unnest($8::bigint[], $5::text[], $6::text[], $7::text[])
                    WITH ORDINALITY AS e(at, kind, body, search, position)`,
    },
    lastWrite: {
      text: `SELECT last_write_id FROM ${activity} WHERE session_id = $1`,
    },
    load: {
      name: name('load_session'),
      text: `SELECT timestamp_ms, payload FROM ${events} WHERE session_id = $1 ORDER BY seq`,
    },
    firstPage: {
      text: `SELECT ${SUMMARY_COLUMNS} FROM ${activity} a JOIN ${sessions} s USING (session_id)
              ${order} LIMIT $1`,
    },
    nextPage: {
      text: `SELECT ${SUMMARY_COLUMNS} FROM ${activity} a JOIN ${sessions} s USING (session_id)
              WHERE (a.updated_at_ms, a.sort_key) < ($2::bigint, $3::bytea)
              ${order} LIMIT $1`,
    },
    // $1: the id prefix pattern, $2: the substring pattern; both LIKE patterns escaped with '!'. The
    // messages not copied yet are read per session from the events' primary key (LATERAL ... LIMIT keeps
    // the planner from scanning every event instead).
    find: {
      text: `SELECT ${SUMMARY_COLUMNS} FROM ${activity} a JOIN ${sessions} s USING (session_id)
              WHERE s.id_search LIKE $1 ESCAPE '!'
                 OR s.title_search LIKE $2 ESCAPE '!'
                 OR EXISTS (SELECT 1 FROM ${search} x
                             WHERE x.session_id = a.session_id AND x.search_text LIKE $2 ESCAPE '!')
                 OR a.session_id IN (
                      SELECT p.session_id FROM ${activity} p
                       CROSS JOIN LATERAL (
                         SELECT 1 FROM ${events} e
                          WHERE e.session_id = p.session_id AND e.seq > p.indexed_seq
                            AND e.search_text LIKE $2 ESCAPE '!'
                          LIMIT 1) hit
                       WHERE p.event_count > p.indexed_seq)
              ${order}`,
    },
    texts: {
      text: `SELECT payload FROM ${events} WHERE session_id = $1 AND search_text IS NOT NULL ORDER BY seq`,
    },
    // The vector of a message not copied yet is computed as the generated column computes it. The query
    // is written out (not joined) so that the GIN index serves the `@@`.
    ranked: {
      text: `WITH hits AS (
               SELECT x.session_id, ts_rank(x.search_vector, websearch_to_tsquery('simple', $1)) AS rank
                 FROM ${search} x WHERE x.search_vector @@ websearch_to_tsquery('simple', $1)
               UNION ALL
               SELECT p.session_id, hit.rank FROM ${activity} p
                CROSS JOIN LATERAL (
                  SELECT ts_rank(v.vector, websearch_to_tsquery('simple', $1)) AS rank
                    FROM ${events} e
                   CROSS JOIN LATERAL (SELECT to_tsvector('simple'::regconfig,
                     left(e.search_text, ${VECTOR_INPUT_CHARS})) AS vector) v
                   WHERE e.session_id = p.session_id AND e.seq > p.indexed_seq
                     AND v.vector @@ websearch_to_tsquery('simple', $1)
                  OFFSET 0) hit
                WHERE p.event_count > p.indexed_seq
             )
             SELECT ${SUMMARY_COLUMNS}, r.rank FROM (
               SELECT session_id, max(rank) AS rank FROM hits GROUP BY session_id
             ) r JOIN ${activity} a USING (session_id) JOIN ${sessions} s USING (session_id)
             ORDER BY r.rank DESC, a.updated_at_ms DESC, a.sort_key DESC LIMIT $2`,
    },
    // Waits for a save in progress (its row lock), and keeps later saves out until the commit.
    deleteActivity: {
      text: `DELETE FROM ${activity} WHERE session_id = $1 RETURNING event_count`,
    },
    // $2: the event count the activity row had, so that a first event saved meanwhile is not taken.
    deleteRest: {
      text: `WITH gone AS (DELETE FROM ${sessions} WHERE session_id = $1),
                  texts AS (DELETE FROM ${search} WHERE session_id = $1)
             DELETE FROM ${events} WHERE session_id = $1 AND seq <= $2`,
    },
  };
}

/**
 * The common save, as small as it can be (each node it adds costs per event, measured): it moves the
 * existing activity row on and inserts the event, and does nothing, so that `upsert` runs, when the
 * session has no activity row yet, when the row's last write id is this one (a retry of a save that
 * committed) or, `leased`, when the row carries another lease token than this one: `acquire` writes the
 * token there in the statement that takes the lease, so a takeover and this update are ordered by the
 * row lock. `titled` (a user message) also sets the session's title if it has none. $1 id, $2 time,
 * $3 messages (0 or 1), $4 write id, $5 type, $6 payload, $7 search text, then the lease token if
 * `leased`, then the title and its search form if `titled`.
 */
function appendStatement(tables: Tables, leased: boolean, titled: boolean): string {
  const { activity, events, sessions } = tables;
  const title = leased ? 9 : 8;
  const setTitle = titled
    ? `, titled AS (
         UPDATE ${sessions} s SET title = $${title}::text, title_search = $${title + 1}::text
           FROM moved WHERE s.session_id = $1::text AND s.title IS NULL
       )`
    : '';
  return `WITH moved AS (
            UPDATE ${activity} a SET updated_at_ms = $2::bigint, message_count = a.message_count + $3::integer,
                   event_count = a.event_count + 1, last_write_id = $4::uuid
             WHERE a.session_id = $1::text AND a.last_write_id IS DISTINCT FROM $4::uuid
                   ${leased ? 'AND a.lease_token = $8::uuid' : ''}
            RETURNING a.event_count
          )${setTitle}
          INSERT INTO ${events} (session_id, seq, timestamp_ms, payload_type, payload, search_text)
          SELECT $1::text, event_count, $2::bigint, $5::text, $6::text, $7::text FROM moved`;
}

/** The first argument of the search passes' advisory lock: "YOUS", beside the migrations' "YOUY". */
const SEARCH_LOCK_CLASS = 0x594f5553;

/**
 * One pass of the search indexing: takes up to $1 sessions with messages not copied yet, copies up to $2
 * of their events' text into the search table and moves each session's `indexed_seq` to the last event it
 * read; $3 is the schema name. One pass at a time per schema (an advisory lock: a background pass that
 * finds another running does nothing, a flush waits for it), so passes never do the same work twice nor
 * wait on each other's rows. The activity rows are locked FOR KEY SHARE: a delete waits for the pass (or
 * the pass skips a session being deleted), while saves, which do not change the key, go on; `indexed_seq`
 * is updated last, so a save waits at most for the end of the statement. The events are read in this
 * statement's snapshot, where a session's events are always a prefix of its log (a writer commits before
 * the next takes the row lock), so no message is skipped.
 */
export function indexStatement(tables: Tables, background: boolean): string {
  const { activity, events, search } = tables;
  const gate = background
    ? `SELECT pg_try_advisory_xact_lock(${SEARCH_LOCK_CLASS}, hashtext($3::text)) AS open`
    : `SELECT true AS open FROM (SELECT pg_advisory_xact_lock(${SEARCH_LOCK_CLASS}, hashtext($3::text))) l`;
  return `WITH gate AS (${gate}), target AS (
            SELECT a.session_id, a.indexed_seq FROM ${activity} a, gate
             WHERE gate.open AND a.event_count > a.indexed_seq
             ORDER BY a.session_id LIMIT $1
             FOR KEY SHARE OF a ${background ? 'SKIP LOCKED' : ''}
          ), batch AS (
            SELECT e.session_id, e.seq, e.search_text
              FROM target t JOIN ${events} e ON e.session_id = t.session_id AND e.seq > t.indexed_seq
             ORDER BY e.session_id, e.seq LIMIT $2
          ), copied AS (
            INSERT INTO ${search} (session_id, seq, search_text)
            SELECT session_id, seq, search_text FROM batch WHERE search_text IS NOT NULL
            ON CONFLICT (session_id, seq) DO NOTHING
            RETURNING 1
          ), reached AS (
            SELECT session_id, max(seq) AS seq FROM batch GROUP BY session_id
          ), advanced AS (
            -- The ANY(...) lets the planner find the rows by primary key instead of scanning the table.
            UPDATE ${activity} a SET indexed_seq = r.seq FROM reached r
             WHERE a.session_id = r.session_id AND a.indexed_seq < r.seq
               AND a.session_id = ANY (ARRAY(SELECT session_id FROM reached))
            RETURNING 1
          )
          SELECT (SELECT count(*) FROM target)::integer AS sessions,
                 (SELECT count(*) FROM batch)::integer AS events,
                 (SELECT count(*) FROM copied)::integer AS indexed`;
}
