import { expect, test } from 'vitest';
import { OpenCalls } from '../src/kernel/open-calls.js';

/** A small deterministic generator (mulberry32), so a failure replays the same operations. */
function randomOf(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

test('OpenCalls keeps what a Map keeps, in its order, below and above 32 open calls', () => {
  for (const [seed, idCount] of [
    [1, 4],
    [2, 40],
    [3, 200],
  ] as const) {
    const random = randomOf(seed);
    const calls = new OpenCalls<number>();
    const model = new Map<string, number>();
    for (let step = 0; step < 5_000; step++) {
      const id = `call_${Math.floor(random() * idCount)}`;
      const roll = random();
      if (roll < 0.55) {
        calls.set(id, step);
        model.set(id, step);
      } else if (roll < 0.98) {
        calls.delete(id);
        model.delete(id);
      } else {
        calls.clear();
        model.clear();
      }
      expect(calls.size).toBe(model.size);
      if (step % 50 === 0) expect(calls.values()).toEqual([...model.values()]);
    }
    expect(calls.values()).toEqual([...model.values()]);
  }
});

test('OpenCalls: setting an open id keeps its place; deleting an unknown id changes nothing', () => {
  const calls = new OpenCalls<string>();
  calls.set('a', 'first a');
  calls.set('b', 'b');
  calls.set('a', 'second a');
  calls.delete('missing');
  expect(calls.values()).toEqual(['second a', 'b']);
  calls.delete('a');
  expect(calls.values()).toEqual(['b']);
  calls.clear();
  expect(calls.size).toBe(0);
  expect(calls.values()).toEqual([]);
});
