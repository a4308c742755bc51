import type { Memory, SessionEvent } from '@youyou/agent';
import { InMemoryMemoryStorage, InMemorySessionStorage } from '@youyou/agent/testing';
import fc from 'fast-check';
import { test } from 'vitest';
import { openSqliteStorage } from '../src/index.js';

/**
 * Characters chosen to break a search that is not a literal, case-folded substring match: NUL, quotes and
 * FTS/LIKE syntax, letters whose lower case differs in length or by context (İ, Σ, ß, the Kelvin sign),
 * CJK and an astral emoji, and white space (which findSession trims).
 */
const ALPHABET = [
  'a',
  'b',
  'A',
  'B',
  ' ',
  '\0',
  '"',
  '*',
  '%',
  '_',
  'İ',
  'Σ',
  'σ',
  'ß',
  'K',
  '汉',
  '字',
  '😀',
  'é',
  '\u0301',
];

const text = (maxLength: number) =>
  fc.array(fc.constantFrom(...ALPHABET), { maxLength }).map((characters) => characters.join(''));

const at = (offsetMs: number) => new Date(Date.UTC(2024, 0, 1) + offsetMs);

/** A random query, or a piece of a stored text (upper-cased or not), so that long needles often match. */
type QuerySpec = { raw: string } | { source: number; start: number; length: number; upper: boolean };

const querySpec: fc.Arbitrary<QuerySpec> = fc.oneof(
  text(5).map((raw) => ({ raw })),
  fc.record({
    source: fc.nat(),
    start: fc.nat(),
    length: fc.integer({ min: 1, max: 6 }),
    upper: fc.boolean(),
  }),
);

function queryOf(spec: QuerySpec, pool: readonly string[]): string {
  if ('raw' in spec) return spec.raw;
  const source = [...(pool[spec.source % Math.max(1, pool.length)] ?? '')];
  const start = spec.start % Math.max(1, source.length);
  const piece = source.slice(start, start + spec.length).join('');
  return spec.upper ? piece.toUpperCase() : piece;
}

test('findSession answers exactly what the in-memory reference answers', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          id: text(4),
          texts: fc.array(text(12), { minLength: 1, maxLength: 3 }),
          flush: fc.boolean(),
        }),
        {
          maxLength: 6,
        },
      ),
      fc.array(querySpec, { minLength: 1, maxLength: 8 }),
      async (sessions, specs) => {
        const reference = new InMemorySessionStorage();
        const sqlite = await openSqliteStorage(':memory:');
        try {
          for (const [index, session] of sessions.entries()) {
            // Distinct, non-empty ids with the random part in front, so id prefixes are exercised.
            const sessionId = `${session.id}#${index}`;
            for (const [position, content] of session.texts.entries()) {
              const event: SessionEvent = {
                timestamp: at(index * 10 + position),
                payload:
                  position % 2 === 0
                    ? { type: 'user_message', content: [{ type: 'text', text: content }] }
                    : {
                        type: 'assistant_message',
                        content: [{ type: 'text', text: content }],
                        status: 'complete',
                      },
              };
              await reference.saveEvent(sessionId, event);
              await sqlite.sessions.saveEvent(sessionId, event);
            }
            // Some sessions go into the full-text index, the later ones are left to the scan of the tail.
            if (session.flush) await sqlite.sessions.flushSearchIndex();
          }
          const pool = sessions.flatMap((session, index) => [`${session.id}#${index}`, ...session.texts]);
          for (const query of specs.map((spec) => queryOf(spec, pool))) {
            const expected = (await reference.findSession(query)).map((summary) => summary.sessionId);
            const actual = (await sqlite.sessions.findSession(query)).map((summary) => summary.sessionId);
            if (JSON.stringify(actual) !== JSON.stringify(expected)) {
              throw new Error(
                `findSession(${JSON.stringify(query)}): ${JSON.stringify(actual)} ≠ ${JSON.stringify(expected)}`,
              );
            }
          }
        } finally {
          await sqlite.close();
        }
      },
    ),
    { numRuns: 150 },
  );
});

test('memory search answers exactly what the in-memory reference answers', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ content: text(12), updated: fc.integer({ min: 0, max: 5 }) }), { maxLength: 8 }),
      fc.array(fc.tuple(querySpec, fc.constantFrom(1, 3, Number.POSITIVE_INFINITY)), {
        minLength: 1,
        maxLength: 6,
      }),
      async (memories, queries) => {
        const reference = new InMemoryMemoryStorage();
        const sqlite = await openSqliteStorage(':memory:');
        try {
          for (const [index, entry] of memories.entries()) {
            const memory: Memory = {
              id: `m${index}`,
              namespace: 'ns',
              content: entry.content,
              createdAt: at(0),
              updatedAt: at(entry.updated),
            };
            await reference.save(memory);
            await sqlite.memories.save(memory);
          }
          const pool = memories.map((entry) => entry.content);
          for (const [spec, limit] of queries) {
            const query = queryOf(spec, pool);
            const expected = await reference.search('ns', query, limit);
            const actual = await sqlite.memories.search('ns', query, limit);
            if (JSON.stringify(actual) !== JSON.stringify(expected)) {
              throw new Error(
                `search(${JSON.stringify(query)}, ${limit}): ${JSON.stringify(actual)} ≠ ${JSON.stringify(expected)}`,
              );
            }
          }
        } finally {
          await sqlite.close();
        }
      },
    ),
    { numRuns: 150 },
  );
});
