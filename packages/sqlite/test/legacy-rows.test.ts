import type { SessionEvent } from '@youyou/agent';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { openSqliteStorage } from '../src/index.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

// Rows as the adapters wrote them before they shared the core's codec: the SQLite adapter wrapped an
// object that has a `$youyou` key of its own as `{ value }`, the PostgreSQL adapter as `{ entries }`.
// Whichever form a file holds, the adapter has to load it and search it.

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
  'SQLite `value` wrapper': [
    '{"type":"metadata","key":"legacy","value":{"kept":{"$youyou":"object","value":{"$youyou":"date","ms":7,"when":{"$youyou":"date","ms":9},"__proto__":1}},"big":{"$youyou":"bigint","value":"5"},"note":"x"}}',
    '{"type":"assistant_message","content":[{"type":"text","text":"deep answer","extra":{"$youyou":"object","value":{"$youyou":1}}}],"status":"complete"}',
  ],
  'PostgreSQL `entries` wrapper': [
    '{"type":"metadata","key":"legacy","value":{"kept":{"$youyou":"object","entries":[["$youyou","date"],["ms",7],["when",{"$youyou":"date","ms":9}],["__proto__",1]]},"big":{"$youyou":"bigint","value":"5"},"note":"x"}}',
    '{"type":"assistant_message","content":[{"type":"text","text":"deep answer","extra":{"$youyou":"object","entries":[["$youyou",1]]}}],"status":"complete"}',
  ],
} as const;

let folder: TempFolder;

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  await folder.remove();
});

describe('rows written by the adapters before the shared codec', () => {
  for (const [form, [metadataJson, assistantJson]] of Object.entries(OLD_FORMS)) {
    test(`a file holding the ${form} loads and searches as saved`, async () => {
      const path = folder.file('legacy.db');
      const writer = await openSqliteStorage(path);
      await writer.sessions.saveEvents('legacy', events);
      await writer.close();

      // Put the old JSON into the file with a connection of our own, as the old adapter left it.
      const raw = new Database(path);
      const ids = raw.prepare('SELECT id FROM events ORDER BY id').pluck().all() as number[];
      const update = raw.prepare('UPDATE events SET payload = ?, tagged = 1 WHERE id = ?');
      update.run(metadataJson, ids[1]);
      update.run(assistantJson, ids[2]);
      raw.close();

      const storage = await openSqliteStorage(path);
      try {
        const loaded = await storage.sessions.loadSession('legacy');
        expect(loaded).toStrictEqual(events);
        const value = loaded?.[1]?.payload.type === 'metadata' ? loaded[1].payload.value : undefined;
        const kept = (value as { kept: Record<string, unknown> }).kept;
        expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
        expect(Object.hasOwn(kept, '__proto__')).toBe(true);
        // The search checks every hit against the text of the stored payload, so this reads the old row.
        const found = await storage.sessions.findSession('deep answer');
        expect(found.map((summary) => summary.sessionId)).toStrictEqual(['legacy']);
      } finally {
        await storage.close();
      }
    });
  }

  test('saving such a value again writes the `value` wrapper', async () => {
    const storage = await openSqliteStorage(folder.file('new.db'));
    try {
      await storage.sessions.saveEvent('new', events[1] as SessionEvent);
      const row = storage.database.prepare('SELECT payload, tagged FROM events').get() as {
        payload: string;
        tagged: number;
      };
      expect(row.tagged).toBe(1);
      const stored = JSON.parse(row.payload) as { value: { kept: Record<string, unknown> } };
      expect(stored.value.kept).toEqual({ $youyou: 'object', value: expect.any(Object) });
    } finally {
      await storage.close();
    }
  });
});
