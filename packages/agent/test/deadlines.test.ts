import { describe, expect, it } from 'vitest';
import { DeadlineScheduler } from '../src/kernel/deadlines.js';

const TEN_MINUTES = 600_000;

/** A promise for the next time `onDue` is called, with what it was called with. */
function firing<Subject>() {
  let fired: (subject: Subject) => void = () => undefined;
  const done = new Promise<Subject>((resolve) => {
    fired = resolve;
  });
  return { onDue: (subject: Subject) => fired(subject), done };
}

/** One turn of the event loop: the scheduler releases an idle timer at its end. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('DeadlineScheduler', () => {
  it('fires deadlines of 0 and 1 ms with their subjects, earliest first, and then holds no timer', async () => {
    const scheduler = new DeadlineScheduler();
    const order: string[] = [];
    const last = firing<string>();
    scheduler.schedule(0, (subject: string) => order.push(subject), 'zero');
    scheduler.schedule(
      1,
      (subject: string) => {
        order.push(subject);
        last.onDue(subject);
      },
      'one',
    );
    expect(scheduler.pending).toBe(2);
    expect(scheduler.timerState).toBe('armed');
    await last.done;
    expect(order).toEqual(['zero', 'one']);
    expect(scheduler.pending).toBe(0);
    // The timer fired and nothing is pending: no Node timer is left.
    expect(scheduler.timerState).toBe('none');
  });

  it('never fires a deadline before its time', async () => {
    const scheduler = new DeadlineScheduler();
    const started = performance.now();
    const { onDue, done } = firing<number>();
    scheduler.schedule(25, () => onDue(performance.now()), undefined);
    // A lower bound only: a busy machine can make it later, never earlier.
    expect((await done) - started).toBeGreaterThanOrEqual(25);
  });

  it('never fires a cancelled deadline, also once a later one has fired', async () => {
    const scheduler = new DeadlineScheduler();
    let cancelledRan = false;
    const cancelled = scheduler.schedule(
      1,
      () => {
        cancelledRan = true;
      },
      undefined,
    );
    const later = firing<string>();
    scheduler.schedule(20, later.onDue, 'later');
    scheduler.cancel(cancelled);
    scheduler.cancel(cancelled);
    expect(scheduler.pending).toBe(1);
    expect(await later.done).toBe('later');
    await nextTurn();
    expect(cancelledRan).toBe(false);
    expect(scheduler.pending).toBe(0);
  });

  it('moves the timer earlier for an earlier deadline, not for a later one, and re-arms after firing', async () => {
    const scheduler = new DeadlineScheduler();
    const far = scheduler.schedule(TEN_MINUTES, () => undefined, undefined);
    const armedForFar = scheduler.armedFor;
    scheduler.schedule(2 * TEN_MINUTES, () => undefined, undefined);
    expect(scheduler.armedFor).toBe(armedForFar);
    const soon = firing<string>();
    scheduler.schedule(1, soon.onDue, 'soon');
    expect(scheduler.armedFor).toBeLessThan(armedForFar);
    await soon.done;
    // Fired for the soon one, it is armed again for the earliest pending deadline: the far one.
    expect(scheduler.pending).toBe(2);
    expect(scheduler.timerState).toBe('armed');
    expect(scheduler.armedFor).toBeGreaterThanOrEqual(armedForFar);
    expect(scheduler.armedFor).toBeLessThan(armedForFar + TEN_MINUTES);
    scheduler.cancel(far);
  });

  it('keeps the timer for a deadline of the same turn once nothing is pending, and clears it at the end of the turn', async () => {
    const scheduler = new DeadlineScheduler();
    const first = scheduler.schedule(TEN_MINUTES, () => undefined, undefined);
    const armedFor = scheduler.armedFor;
    scheduler.cancel(first);
    expect(scheduler.pending).toBe(0);
    expect(scheduler.timerState).toBe('releasing');
    // Due after the armed time: the same timer serves it.
    const second = scheduler.schedule(TEN_MINUTES, () => undefined, undefined);
    expect(scheduler.armedFor).toBe(armedFor);
    expect(scheduler.timerState).toBe('armed');
    await nextTurn();
    expect(scheduler.timerState).toBe('armed');
    scheduler.cancel(second);
    expect(scheduler.timerState).toBe('releasing');
    await nextTurn();
    expect(scheduler.timerState).toBe('none');
  });

  it('fires a deadline scheduled by a firing callback', async () => {
    const scheduler = new DeadlineScheduler();
    const chained = firing<string>();
    scheduler.schedule(1, () => scheduler.schedule(0, chained.onDue, 'chained'), undefined);
    expect(await chained.done).toBe('chained');
  });

  it('keeps nothing of a cancelled deadline alive, even while its handle is held', async () => {
    const gc = globalThis.gc;
    if (gc === undefined) throw new Error('run the tests with node --expose-gc (vitest.config.ts sets it)');
    const scheduler = new DeadlineScheduler();
    const { handle, subjectRef, callbackRef } = (() => {
      const subject = { session: 'closed' };
      const onDue = (held: typeof subject) => held.session;
      const handle = scheduler.schedule(TEN_MINUTES, onDue, subject);
      scheduler.cancel(handle);
      return { handle, subjectRef: new WeakRef(subject), callbackRef: new WeakRef(onDue) };
    })();
    for (let round = 0; round < 3; round += 1) {
      await nextTurn();
      gc();
    }
    expect(handle).toBeDefined();
    expect(subjectRef.deref()).toBeUndefined();
    expect(callbackRef.deref()).toBeUndefined();
  });
});
