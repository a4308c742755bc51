import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { JournalEntry, SessionJournal } from '../sessions/journal.js';

/** A signal in a stream's queue: tell the client to reload the committed history (see `streamJournal`). */
const RESYNC = Symbol('resync');

/**
 * Streams the journal after `after` as SSE (`id:` = sequence, `event:` = payload type), then the live
 * events, until `until` says an entry was the last or the client goes away. A comment line every
 * `keepAliveMs` keeps proxies from closing a quiet stream.
 *
 * A `resync` message (`id:` = a cursor that never moves the client back) tells the client to reload the
 * committed history (`GET …/messages`) because this stream cannot show it everything: first, when the cursor
 * cannot be continued without a gap (another process's, from before a restart, or older than what is kept),
 * followed by the live events only; and whenever `changedElsewhere` reports that another process committed
 * events of the session (its turn runs there, so its live events never reach this journal).
 */
export function streamJournal(options: {
  context: Context;
  journal: SessionJournal;
  after: number;
  until?: (entry: JournalEntry) => boolean;
  /** Only the events of this turn (a turn's own stream); every event when absent (a tail). */
  turnId?: string;
  keepAliveMs: number;
  /** Calls its listener when another process commits events of the session; answers how to stop. */
  changedElsewhere?: (listener: () => void) => Promise<() => void>;
}): Response {
  const { context, journal, after, until } = options;
  return streamSSE(context, async (stream) => {
    const queue: (JournalEntry | typeof RESYNC)[] = [];
    let wake: (() => void) | undefined;
    const { backlog, continuous, lastSequence, unsubscribe } = journal.subscribe(after, (entry) => {
      queue.push(entry);
      wake?.();
    });
    if (continuous) queue.unshift(...backlog);
    // Never below the client's own cursor: a cursor of 0 would ask the next process for all it holds.
    let sent = continuous ? after : Math.max(lastSequence, after);
    if (!continuous) queue.unshift(RESYNC);
    let aborted = false;
    stream.onAbort(() => {
      aborted = true;
      wake?.();
    });
    const stopWatching =
      (await options
        .changedElsewhere?.(() => {
          // One pending resync covers every change until it is written.
          if (queue.includes(RESYNC)) return;
          queue.push(RESYNC);
          wake?.();
        })
        .catch(() => undefined)) ?? (() => undefined);
    const keepAlive = setInterval(() => {
      stream.write(': keep-alive\n\n').catch(() => undefined);
    }, options.keepAliveMs);
    try {
      while (!aborted) {
        const entry = queue.shift();
        if (entry === undefined) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        if (entry === RESYNC) {
          await stream.writeSSE({
            id: String(sent),
            event: 'resync',
            data: JSON.stringify({ type: 'resync', sequence: sent }),
          });
          continue;
        }
        if (options.turnId !== undefined && entry.turnId !== options.turnId) continue;
        await stream.writeSSE({ id: String(entry.sequence), event: entry.type, data: entry.data });
        sent = entry.sequence;
        if (until?.(entry) === true) break;
      }
    } finally {
      clearInterval(keepAlive);
      unsubscribe();
      stopWatching();
    }
  });
}
