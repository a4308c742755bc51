import type { AgentEvent } from '@youyou/agent';
import { afterEach, expect, test, vi } from 'vitest';
import { SessionJournal } from '../src/sessions/journal.js';
import { JournalBudget } from '../src/sessions/journal-budget.js';

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

/** The end of turn `turnId`, as the core emits it. */
function turnEnd(turnId: string): AgentEvent {
  return { ...event(0), turnId, payload: { type: 'turn_complete' } } as unknown as AgentEvent;
}

test('over the byte budget, the journal whose last turn ended longest ago drops its finished turns first; a running turn only when none is left', () => {
  let clock = 1_000;
  vi.spyOn(Date, 'now').mockImplementation(() => clock++);
  const budget = new JournalBudget(1_000);
  const [first, second, third] = [1, 2, 3].map(() => new SessionJournal(100, undefined, budget));
  if (first === undefined || second === undefined || third === undefined) throw new Error('three journals');
  first.append(event(1));
  first.append(turnEnd('t'));
  const secondStart = second.append(event(1)).sequence;
  const secondEnd = second.append(turnEnd('t')).sequence;
  first.append(event(2));
  first.append(turnEnd('t'));
  const kept = budget.keptBytes;
  expect(kept).toBe(first.keptBytes + second.keptBytes);
  // The third journal's running turn grows past the budget: the second journal's last turn ended first.
  while (budget.keptBytes + 100 <= 1_000) third.append(event(3));
  third.append(event(3));
  expect(second.keptBytes).toBe(0);
  expect(first.since(0)).toHaveLength(4);
  expect(second.subscribe(secondStart, () => undefined).continuous).toBe(false);
  expect(second.subscribe(secondEnd, () => undefined).continuous).toBe(true);
  // Then the first journal's; then, nothing finished being left, the running turn's own oldest entries.
  for (let index = 0; index < 20; index++) third.append(event(4));
  expect(first.keptBytes).toBe(0);
  expect(budget.keptBytes).toBeLessThanOrEqual(1_000);
  expect(budget.keptBytes).toBe(third.keptBytes);
  expect(third.since(0).at(-1)?.data).toContain('"text":"4"');
  expect(third.subscribe(0, () => undefined).continuous).toBe(false);
});

test('what a journal keeps is what it sent: the same JSON, Errors as their public code and message only', () => {
  const journal = new SessionJournal(10);
  const sent: string[] = [];
  journal.subscribe(0, (entry) => sent.push(entry.data));
  const failure = new Error('upstream down: key sk-secret');
  journal.append({ ...event(1), payload: { type: 'error', error: failure } } as unknown as AgentEvent);
  journal.append(event(2));
  expect(journal.since(0).map((entry) => entry.data)).toEqual(sent);
  expect(sent.join('')).not.toContain('sk-secret');
  expect(JSON.parse(sent[1] ?? '')).toEqual({
    sessionId: 's',
    turnId: 't',
    timestamp: new Date(0).toISOString(),
    sequence: journal.lastSequence,
    payload: { type: 'text_delta', text: '2' },
  });
});

test('a journal at its capacity keeps exactly its newest entries, and counts only their bytes, over many appends', () => {
  let clock = 1_000;
  vi.spyOn(Date, 'now').mockImplementation(() => clock++);
  const budget = new JournalBudget(1_000_000);
  const journal = new SessionJournal(4, undefined, budget);
  const sequences = Array.from({ length: 50 }, (_, index) => journal.append(event(index)).sequence);
  const kept = journal.since(0);
  expect(kept.map((entry) => entry.sequence)).toEqual(sequences.slice(-4));
  expect(kept.map((entry) => JSON.parse(entry.data).payload.text)).toEqual(['46', '47', '48', '49']);
  expect(budget.keptBytes).toBe(journal.keptBytes);
  expect(journal.keptBytes).toBe(
    kept.reduce((sum, entry) => sum + 64 + JSON.stringify(JSON.parse(entry.data).payload).length, 0),
  );
  expect(journal.subscribe(sequences[45] ?? 0, () => undefined).continuous).toBe(true);
  expect(journal.subscribe(sequences[44] ?? 0, () => undefined).continuous).toBe(false);
  journal.release();
  expect(budget.keptBytes).toBe(0);
  expect(journal.since(0)).toEqual([]);
});

test('a payload counts a byte a character, two when one is above U+00FF, and a drop gives back what was counted', () => {
  const budget = new JournalBudget(1_000_000);
  const cases: [text: string, bytesPerCharacter: number][] = [
    ['plain', 1],
    ['café, naïve, ÿ (Latin-1)', 1],
    ['“quoted”', 2],
    ['東京', 2],
    ['ok 🙂', 2],
    [`${'x'.repeat(500)}東`, 2],
  ];
  const journals = cases.map(([text, bytesPerCharacter]) => {
    const journal = new SessionJournal(10, undefined, budget);
    journal.append({ ...event(0), payload: { type: 'text_delta', text } } as AgentEvent);
    const json = JSON.stringify({ type: 'text_delta', text });
    expect(journal.keptBytes).toBe(64 + bytesPerCharacter * json.length);
    return journal;
  });
  expect(budget.keptBytes).toBe(journals.reduce((sum, journal) => sum + journal.keptBytes, 0));
  for (const journal of journals) journal.release();
  expect(budget.keptBytes).toBe(0);
});
