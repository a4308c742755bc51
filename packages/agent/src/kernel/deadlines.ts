/** The largest delay setTimeout accepts; a deadline further away than this is no deadline. */
export const MAX_TIMER_MS = 2_147_483_647;

/** How many durations' (empty) lists an idle scheduler keeps. */
const KEPT_DURATIONS = 8;

/**
 * One registered deadline: a node of its duration's list while it is pending. Cancelled or fired, it is
 * unlinked and forgets its callback and subject, so a caller that keeps the handle keeps nothing alive through it.
 */
export interface Deadline {
  /** Opaque to callers: only `cancel` reads or writes it. */
  readonly [deadlineNode]: true;
}

declare const deadlineNode: unique symbol;

/** The deadline's bookkeeping; `list` is undefined once it fired or was cancelled. */
interface Node<Subject = unknown> {
  /** A `performance.now()` time. */
  due: number;
  onDue: ((subject: Subject) => void) | undefined;
  subject: Subject | undefined;
  previous: Node | undefined;
  next: Node | undefined;
  list: DurationList | undefined;
}

/**
 * The pending deadlines of one duration, oldest first. `performance.now()` never goes back, so appending keeps
 * each list sorted by due time: registering and cancelling are O(1), and the earliest deadline is one of the
 * lists' heads (a runtime uses a handful of durations: the hook bound, the tool timeout, ...).
 */
interface DurationList {
  head: Node | undefined;
  tail: Node | undefined;
}

/**
 * One Node timer for many deadlines (the hook bounds, the tool timeouts): it is armed for the earliest pending
 * deadline, and moved only when a new deadline is due before it or when it fires. A cancelled deadline does not
 * move it: the timer may then fire with nothing due and is armed again for the next deadline.
 *
 * The timer keeps the process alive while a deadline is pending, as a setTimeout per deadline would, and no
 * longer: when the last pending deadline goes, the timer is cleared at the end of the event-loop turn (a
 * setImmediate), unless a new deadline came meanwhile. Bounded waits that follow each other within a turn (a
 * hook answered, the next hook asked, a tool run) so share one timer instead of making and clearing one each.
 * Until then the timer stays ref'd, and that keeps nothing alive that the release's own immediate does not: the
 * loop does not block or end before its check phase while an immediate is pending.
 *
 * A deadline fires when `performance.now()` reached its due time, never before: a Node timer can fire up to a
 * millisecond early (it counts from the loop's cached time), and a deadline not due yet is left for the next.
 */
export class DeadlineScheduler {
  readonly #lists = new Map<number, DurationList>();
  #pending = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The `performance.now()` time the timer is armed for; Infinity when no timer is armed. */
  #timerDue = Number.POSITIVE_INFINITY;
  /** True while the end-of-turn release of an idle timer is scheduled. */
  #releaseScheduled = false;

  /** How many deadlines are pending. */
  get pending(): number {
    return this.#pending;
  }

  /** Whether a Node timer is armed: none, armed, or armed with its release at the end of the turn scheduled. */
  get timerState(): 'none' | 'armed' | 'releasing' {
    if (this.#timer === undefined) return 'none';
    return this.#releaseScheduled && this.#pending === 0 ? 'releasing' : 'armed';
  }

  /** The `performance.now()` time the timer is armed for; Infinity when none is. */
  get armedFor(): number {
    return this.#timerDue;
  }

  /**
   * Calls `onDue(subject)` once `delayMs` have passed (0 for less, MAX_TIMER_MS for more), unless the
   * deadline is cancelled first. Passing the subject instead of a closure lets a caller register with a function
   * it made once. `now` is the `performance.now()` time the delay counts from, for a caller that has just read
   * the clock (a tool call's start): one clock read less. It must not be later than the clock.
   */
  schedule<Subject>(
    delayMs: number,
    onDue: (subject: Subject) => void,
    subject: Subject,
    now = performance.now(),
  ): Deadline {
    const delay = delayMs > 0 ? Math.min(delayMs, MAX_TIMER_MS) : 0;
    const due = now + delay;
    let list = this.#lists.get(delay);
    if (list === undefined) {
      list = { head: undefined, tail: undefined };
      this.#lists.set(delay, list);
    }
    const node: Node<Subject> = { due, onDue, subject, previous: list.tail, next: undefined, list };
    if (list.tail === undefined) list.head = node as Node;
    else list.tail.next = node as Node;
    list.tail = node as Node;
    this.#pending += 1;
    // A timer already past its time has not fired (a busy loop, or a timer a test's fake clock swallowed):
    // arming a fresh one costs little and never lets a deadline hang on it.
    if (due < this.#timerDue || this.#timerDue <= now) this.#arm(due, now);
    return node as unknown as Deadline;
  }

  /** Cancels a pending deadline: its callback will never be called. Harmless for undefined or a settled one. */
  cancel(deadline: Deadline | undefined): void {
    if (deadline === undefined) return;
    const node = deadline as unknown as Node;
    if (node.list === undefined) return;
    this.#unlink(node);
    if (this.#pending === 0) this.#idle();
  }

  #unlink(node: Node): void {
    const list = node.list as DurationList;
    if (node.previous === undefined) list.head = node.next;
    else node.previous.next = node.next;
    if (node.next === undefined) list.tail = node.previous;
    else node.next.previous = node.previous;
    node.list = undefined;
    node.previous = undefined;
    node.next = undefined;
    node.onDue = undefined;
    node.subject = undefined;
    this.#pending -= 1;
  }

  /** Nothing is pending: the timer is cleared at the end of the turn, unless a deadline comes before. */
  #idle(): void {
    if (this.#timer === undefined || this.#releaseScheduled) return;
    this.#releaseScheduled = true;
    setImmediate(this.#release);
  }

  readonly #release = (): void => {
    this.#releaseScheduled = false;
    if (this.#pending > 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    // The lists of a few durations stay for the next deadlines (a runtime uses a handful); durations used once
    // must not pile up in the map of a long-lived process. Nothing is pending, so every list is empty.
    if (this.#lists.size > KEPT_DURATIONS) this.#lists.clear();
  };

  /** Arms the one timer for `due`, replacing the armed one; it never fires before `due`. */
  #arm(due: number, now: number): void {
    clearTimeout(this.#timer);
    // A release still to come checks `pending` itself; one a fake clock swallowed must not block the next.
    this.#releaseScheduled = false;
    const delay = Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(due - now)));
    this.#timer = setTimeout(this.#fire, delay);
    this.#timerDue = now + delay;
  }

  /** The timer fired: every deadline that is due fires, earliest first, then the timer is armed for the next. */
  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let failure: { error: unknown } | undefined;
    for (let node = this.#earliest(); node !== undefined && node.due <= now; node = this.#earliest()) {
      const { onDue, subject } = node;
      this.#unlink(node);
      try {
        onDue?.(subject);
      } catch (error) {
        // One callback's throw must not strand the other due deadlines; it surfaces as a timer's throw would.
        failure ??= { error };
      }
    }
    this.#armForEarliest();
    if (failure !== undefined) throw failure.error;
  };

  /** After a firing: arms the timer for the earliest pending deadline, drops empty lists, or goes idle. */
  #armForEarliest(): void {
    let earliest = Number.POSITIVE_INFINITY;
    for (const [delayMs, list] of this.#lists) {
      if (list.head === undefined) this.#lists.delete(delayMs);
      else if (list.head.due < earliest) earliest = list.head.due;
    }
    // A callback may have registered a deadline, and so armed the timer, already.
    if (earliest < this.#timerDue) this.#arm(earliest, performance.now());
  }

  /** The pending deadline due first: the earliest of the lists' heads. */
  #earliest(): Node | undefined {
    let earliest: Node | undefined;
    for (const list of this.#lists.values()) {
      const head = list.head;
      if (head !== undefined && (earliest === undefined || head.due < earliest.due)) earliest = head;
    }
    return earliest;
  }
}

/** The runtime's one scheduler: every bounded wait of every session shares its timer. */
export const deadlines = new DeadlineScheduler();
