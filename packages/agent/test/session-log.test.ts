import { describe, expect, test } from 'vitest';
import type { SessionEvent } from '../src/index.js';
import { InMemorySessionStorage } from '../src/index.js';
import { SessionLog } from '../src/log/session-log.js';

const message = (text: string) => ({
  type: 'user_message' as const,
  content: [{ type: 'text' as const, text }],
});

describe('SessionLog', () => {
  test('a subclass that overrides saveEvent is written through its own saveEvent, in order, one pass for a burst', async () => {
    const seen: string[] = [];
    class Watched extends InMemorySessionStorage {
      override async saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
        seen.push(
          event.payload.type === 'user_message' ? (event.payload.content[0] as { text: string }).text : '',
        );
        await new Promise((resolve) => setTimeout(resolve, 1));
        await super.saveEvent(sessionId, event);
      }
    }
    const storage = new Watched();
    const log = new SessionLog({ storage, sessionId: 's' });
    const first = log.append(message('a'));
    const second = log.append(message('b'));
    const third = log.append(message('c'));
    expect(first).toBeInstanceOf(Promise);
    // Appends made while a pass runs join it: one promise, settled once all three are written.
    expect(second).toBe(first);
    expect(third).toBe(first);
    await third;
    expect(seen).toEqual(['a', 'b', 'c']);
    expect((await storage.loadSession('s'))?.length).toBe(3);
    expect(log.pendingCount).toBe(0);
  });

  test('an event the storage refuses stays queued, is reported as STORAGE_ERROR, and is written first once it works', async () => {
    let refuse = true;
    class Flaky extends InMemorySessionStorage {
      override saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
        if (refuse) return Promise.reject(new Error('disk full'));
        return super.saveEvent(sessionId, event);
      }
    }
    const storage = new Flaky();
    const log = new SessionLog({ storage, sessionId: 's' });
    await expect(log.append(message('kept'))).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
    expect(log.pendingCount).toBe(1);
    refuse = false;
    await log.append(message('next'));
    const saved = await storage.loadSession('s');
    expect(saved?.map((event) => event.payload)).toEqual([message('kept'), message('next')]);
    expect(log.pendingCount).toBe(0);
  });
});
