import type { SessionEvent } from '@youyou/agent';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPostgresStorage } from '../src/index.js';
import { dropSchema, randomSchema, testPool } from './support/database.js';

// Rows as the adapters wrote them before they shared the core's codec: the PostgreSQL adapter wrapped an
// object that has a `$youyou` key of its own as `{ entries }`, the SQLite adapter as `{ value }`.
// Whichever form a table holds, the adapter has to load it.

let pool: Pool;
const schema = randomSchema();

beforeAll(() => {
  pool = testPool();
});

afterAll(async () => {
  if (pool !== undefined) {
    await dropSchema(pool, schema);
    await pool.end();
  }
});

const BASE_MS = Date.UTC(2024, 2, 3, 4, 5, 6, 7);

/** The events as they were saved, and as they have to load again. */
const events: SessionEvent[] = [
  {
    timestamp: new Date(BASE_MS),
    payload: { type: 'user_message', content: [{ type: 'text', text: 'first question' }] },
  },
  {
    timestamp: new Date(BASE_MS + 1),
    payload: {
      type: 'metadata',
      key: 'legacy',
      value: { kept: { $youyou: 'date', ms: 7, when: new Date(9), ['__proto__']: 1 }, big: 5n, note: 'x' },
    },
  },
  {
    timestamp: new Date(BASE_MS + 2),
    payload: {
      type: 'assistant_message',
      content: [
        { type: 'text', text: 'deep answer', extra: { $youyou: 1 } } as { type: 'text'; text: string },
      ],
      status: 'complete',
    },
  },
];

const OLD_FORMS = {
  'PostgreSQL `entries` wrapper': [
    '{"type":"metadata","key":"legacy","value":{"kept":{"$youyou":"object","entries":[["$youyou","date"],["ms",7],["when",{"$youyou":"date","ms":9}],["__proto__",1]]},"big":{"$youyou":"bigint","value":"5"},"note":"x"}}',
    '{"type":"assistant_message","content":[{"type":"text","text":"deep answer","extra":{"$youyou":"object","entries":[["$youyou",1]]}}],"status":"complete"}',
  ],
  'SQLite `value` wrapper': [
    '{"type":"metadata","key":"legacy","value":{"kept":{"$youyou":"object","value":{"$youyou":"date","ms":7,"when":{"$youyou":"date","ms":9},"__proto__":1}},"big":{"$youyou":"bigint","value":"5"},"note":"x"}}',
    '{"type":"assistant_message","content":[{"type":"text","text":"deep answer","extra":{"$youyou":"object","value":{"$youyou":1}}}],"status":"complete"}',
  ],
} as const;

describe('rows written by the adapters before the shared codec', () => {
  for (const [index, [form, [metadataJson, assistantJson]]] of Object.entries(OLD_FORMS).entries()) {
    test(`a table holding the ${form} loads as saved`, async () => {
      const sessionId = `legacy-${index}`;
      const writer = await openPostgresStorage({ pool, schema });
      for (const event of events) await writer.sessions.saveEvent(sessionId, event);
      await writer.close();

      // Put the old JSON into the table directly, as the old adapter left it.
      const update = `UPDATE "${schema}".youyou_session_events SET payload = $1 WHERE session_id = $2 AND seq = $3`;
      await pool.query(update, [metadataJson, sessionId, 2]);
      await pool.query(update, [assistantJson, sessionId, 3]);

      const reader = await openPostgresStorage({ pool, schema });
      try {
        const loaded = await reader.sessions.loadSession(sessionId);
        expect(loaded).toStrictEqual(events);
        const value = loaded?.[1]?.payload.type === 'metadata' ? loaded[1].payload.value : undefined;
        const kept = (value as { kept: Record<string, unknown> }).kept;
        expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
        expect(Object.hasOwn(kept, '__proto__')).toBe(true);
      } finally {
        await reader.close();
      }
    });
  }

  test('saving such a value again writes the `value` wrapper', async () => {
    const storage = await openPostgresStorage({ pool, schema });
    try {
      await storage.sessions.saveEvent('new', events[1] as SessionEvent);
      const result = await pool.query<{ payload: string }>(
        `SELECT payload FROM "${schema}".youyou_session_events WHERE session_id = 'new'`,
      );
      const stored = JSON.parse(result.rows[0]?.payload ?? 'null') as { value: { kept: unknown } };
      expect(stored.value.kept).toEqual({ $youyou: 'object', value: expect.any(Object) });
    } finally {
      await storage.close();
    }
  });
});
