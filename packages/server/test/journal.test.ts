import type { AgentEvent } from '@youyou/agent';
import { afterEach, expect, test, vi } from 'vitest';
import { SessionJournal } from '../src/sessions/journal.js';

function event(index: number): AgentEvent {
  return {
    sessionId: 's',
    turnId: 't',
    timestamp: new Date(0),
    sequence: index,
    payload: { type: 'text_delta', text: String(index) },
  } as AgentEvent;
}

afterEach(() => {
  vi.restoreAllMocks();
});

test('sequences only grow, also when the clock goes back, and a later journal numbers after an earlier one', () => {
  const now = vi.spyOn(Date, 'now');
  now.mockReturnValue(5_000);
  const earlier = new SessionJournal(100);
  const first = earlier.append(event(1)).sequence;
  now.mockReturnValue(4_000);
  const second = earlier.append(event(2)).sequence;
  expect(second).toBeGreaterThan(first);
  expect(earlier.since(first).map((entry) => entry.sequence)).toEqual([second]);
  // Another process (or this one after a restart) taking the session over later numbers above both.
  now.mockReturnValue(6_000);
  const later = new SessionJournal(100);
  expect(later.append(event(1)).sequence).toBeGreaterThan(second);
});

test('a cursor is continued only when nothing can be missing after it', () => {
  let clock = 1_000;
  vi.spyOn(Date, 'now').mockImplementation(() => clock++);
  const journal = new SessionJournal(3);
  const sequences = [1, 2, 3, 4, 5].map((index) => journal.append(event(index)).sequence);
  const listener = () => undefined;
  const at = (after: number) => journal.subscribe(after, listener);
  // Kept: the last three; the second entry was dropped last.
  expect(at(sequences[1] ?? 0).continuous).toBe(true);
  expect(at(sequences[1] ?? 0).backlog.map((entry) => entry.sequence)).toEqual(sequences.slice(2));
  expect(at(sequences[3] ?? 0).continuous).toBe(true);
  expect(at(sequences[4] ?? 0).continuous).toBe(true);
  expect(at(sequences[4] ?? 0).backlog).toEqual([]);
  expect(at(0).continuous).toBe(false);
  expect(at(sequences[0] ?? 0).continuous).toBe(false);
  expect(at((sequences[3] ?? 0) + 1).continuous).toBe(false);
  expect(at((sequences[4] ?? 0) + 1).continuous).toBe(false);
});

test('a fresh journal continues cursor 0 and sends everything kept', () => {
  const journal = new SessionJournal(10);
  const subscription = journal.subscribe(0, () => undefined);
  expect(subscription.continuous).toBe(true);
  journal.append(event(1));
  expect(journal.subscribe(0, () => undefined)).toMatchObject({ continuous: true });
  expect(journal.subscribe(0, () => undefined).backlog).toHaveLength(1);
});

test('a cursor of a forgotten journal is not continued by the next journal of the session, which numbers after it', () => {
  let clock = 1_000;
  vi.spyOn(Date, 'now').mockImplementation(() => clock++);
  const earlier = new SessionJournal(10);
  const oldCursor = earlier.append(event(1)).sequence;
  // This process forgot `earlier`; a tail or a new turn makes another journal for the same session.
  const later = new SessionJournal(10);
  expect(later.subscribe(oldCursor, () => undefined)).toMatchObject({ continuous: false, lastSequence: 0 });
  const next = later.append(event(2)).sequence;
  expect(next).toBeGreaterThan(oldCursor);
  expect(later.subscribe(oldCursor, () => undefined)).toMatchObject({
    continuous: false,
    lastSequence: next,
  });
  expect(later.subscribe(next, () => undefined)).toMatchObject({ continuous: true, backlog: [] });
});

test('the last stream to leave a journal is reported, once', () => {
  let unused = 0;
  const journal = new SessionJournal(10, () => unused++);
  const one = journal.subscribe(0, () => undefined);
  const two = journal.subscribe(0, () => undefined);
  one.unsubscribe();
  expect(unused).toBe(0);
  two.unsubscribe();
  two.unsubscribe();
  expect(unused).toBe(1);
  expect(journal.hasSubscribers).toBe(false);
});
