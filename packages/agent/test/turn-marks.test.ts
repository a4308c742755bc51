import { describe, expect, test } from 'vitest';
import { TurnMarks } from '../src/context/turn-marks.js';
import type { Message } from '../src/kernel/types.js';

const user = (text: string): Message => ({ type: 'user', content: [{ type: 'text', text }] });
const system = (content: string): Message => ({ type: 'system', content });
const ids = (marks: TurnMarks): string[] => marks.list.map((mark) => mark.turnId);

describe('TurnMarks', () => {
  test('a turn is listed once: a later message saved with its id does not list it again', () => {
    const marks = new TurnMarks();
    marks.note(system('skill'), 0, 't1');
    marks.note(user('one'), 1, 't1');
    marks.note(user('again'), 2, 't1');
    marks.note(user('two'), 3, 't2');
    expect(marks.list.map(({ turnId, start }) => ({ turnId, start }))).toEqual([
      { turnId: 't1', start: 0 },
      { turnId: 't2', start: 3 },
    ]);
  });

  test('a turn rewound away or summarised can be listed again; one still listed cannot', () => {
    const marks = new TurnMarks();
    for (const [index, id] of ['t1', 't2', 't3'].entries()) marks.note(user(id), index, id);
    expect(marks.rewind('t3')).toBe(2);
    marks.note(user('t3 again'), 2, 't3');
    marks.note(user('t2 again'), 3, 't2');
    expect(ids(marks)).toEqual(['t1', 't2', 't3']);
    // Summary + the last 2 messages: t1 (at 0) is summarised, t2 and t3 move after the summary.
    marks.compact(3, 2);
    expect(ids(marks)).toEqual(['t2', 't3']);
    marks.note(user('t1 again'), 3, 't1');
    expect(ids(marks)).toEqual(['t2', 't3', 't1']);
    marks.truncate(2);
    marks.note(user('t3 after the cut'), 2, 't3');
    expect(ids(marks)).toEqual(['t2', 't3']);
    expect(marks.list.at(-1)?.start).toBe(2);
  });

  test('a copy made by replaceWith knows the listed turns of what it copied', () => {
    const source = new TurnMarks();
    source.note(user('one'), 0, 't1');
    const copy = new TurnMarks();
    copy.replaceWith(source);
    copy.note(user('again'), 1, 't1');
    expect(ids(copy)).toEqual(['t1']);
    source.note(user('two'), 1, 't2');
    expect(ids(copy)).toEqual(['t1']);
  });
});
