import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { JournalEntry, SessionJournal } from './journal.js';
import { publicError } from './public-error.js';

/**
 * The JSON of an event for the wire: Errors become `{ code, message, retryable }` (never a stack, a cause
 * or a provider's text: see public-error.ts), Dates ISO strings.
 */
export function eventJson(entry: JournalEntry): string {
  return JSON.stringify(entry.event, function replace(this: unknown, key: string, value: unknown) {
    // `value` has been through toJSON already; the holder still has the Error itself.
    const original = (this as Record<string, unknown>)[key];
    if (original instanceof Error) return publicError(original);
    return value;
  });
}

const TERMINAL = new Set(['turn_complete', 'turn_cancelled', 'turn_suspended']);

/** Whether an entry ends its turn. */
export function isTerminal(entry: JournalEntry): boolean {
  return TERMINAL.has(entry.event.payload.type);
}

/**
 * Streams the journal after `after` as SSE (`id:` = sequence, `event:` = payload type), then the live
 * events, until `until` says an entry was the last or the client goes away. A comment line every
 * `keepAliveMs` keeps proxies from closing a quiet stream. A cursor this journal cannot continue without a
 * gap (another process's, from before a restart, or older than what is kept) gets a `resync` message first,
 * `id:` = the newest sequence here or the client's cursor if larger, and then the live events only: the client reloads the committed history
 * (`GET …/messages`) instead of trusting a stream with a hole in it.
 */
export function streamJournal(options: {
  context: Context;
  journal: SessionJournal;
  after: number;
  until?: (entry: JournalEntry) => boolean;
  /** Only the events of this turn (a turn's own stream); every event when absent (a tail). */
  turnId?: string;
  keepAliveMs: number;
}): Response {
  const { context, journal, after, until } = options;
  return streamSSE(context, async (stream) => {
    const queue: JournalEntry[] = [];
    let wake: (() => void) | undefined;
    const { backlog, continuous, lastSequence, unsubscribe } = journal.subscribe(after, (entry) => {
      queue.push(entry);
      wake?.();
    });
    if (continuous) queue.unshift(...backlog);
    let aborted = false;
    stream.onAbort(() => {
      aborted = true;
      wake?.();
    });
    const keepAlive = setInterval(() => {
      stream.write(': keep-alive\n\n').catch(() => undefined);
    }, options.keepAliveMs);
    try {
      if (!continuous) {
        // Never below the client's own cursor: a cursor of 0 would ask the next process for all it holds.
        const resyncAt = Math.max(lastSequence, after);
        await stream.writeSSE({
          id: String(resyncAt),
          event: 'resync',
          data: JSON.stringify({ type: 'resync', sequence: resyncAt }),
        });
      }
      while (!aborted) {
        const entry = queue.shift();
        if (entry === undefined) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        if (options.turnId !== undefined && entry.event.turnId !== options.turnId) continue;
        await stream.writeSSE({
          id: String(entry.sequence),
          event: entry.event.payload.type,
          data: eventJson(entry),
        });
        if (until?.(entry) === true) break;
      }
    } finally {
      clearInterval(keepAlive);
      unsubscribe();
    }
  });
}
