import type { SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk';
import { lastChars } from '../../text/tail.js';
import { codeBlockMarkdown } from './tool-calls.js';

/**
 * The most characters of a running call's output an editor is sent. A `tool_call_update`'s content replaces
 * the call's content, so each update carries the output so far: the tail, bounded, not every delta since
 * the start.
 */
const LIVE_TAIL_CHARS = 64 * 1024;

/** The shortest time between two live updates of one call: a chatty command costs a few updates a second. */
const LIVE_UPDATE_INTERVAL_MS = 250;

/** The first line of a tail whose start was cut. */
const CUT_LINE = '[earlier output not shown]';

/** One running call's output so far, and when the editor was last sent it. */
interface LiveCall {
  tail: string;
  cut: boolean;
  sentAt: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The live output of one turn's running calls, as in-progress `tool_call_update`s. The first output of a
 * call is sent at once; later output within the interval waits for it and goes out as one update with the
 * tail so far. Once a call has ended, nothing more is sent for it (its completed update carries the result).
 */
export class LiveToolOutput {
  readonly #calls = new Map<string, LiveCall>();
  readonly #send: (callId: string) => void;
  readonly #contentBefore: (callId: string) => ToolCallContent[];

  /**
   * `send`: queues the call's update, made by `updateOf` when its turn comes (in order with the others);
   * `contentBefore`: what the call's content shows before its output (an edit's diff).
   */
  constructor(options: {
    send: (callId: string) => void;
    contentBefore: (callId: string) => ToolCallContent[];
  }) {
    this.#send = options.send;
    this.#contentBefore = options.contentBefore;
  }

  /** A running call reported `text`: the update to send now, or undefined when it waits for the interval. */
  add(callId: string, text: string): SessionUpdate | undefined {
    let call = this.#calls.get(callId);
    if (call === undefined) {
      call = { tail: '', cut: false, sentAt: Number.NEGATIVE_INFINITY, timer: undefined };
      this.#calls.set(callId, call);
    }
    const joined = call.tail + text;
    call.tail = lastChars(joined, LIVE_TAIL_CHARS);
    call.cut ||= call.tail.length < joined.length;
    if (call.timer !== undefined) return undefined;
    const wait = call.sentAt + LIVE_UPDATE_INTERVAL_MS - Date.now();
    if (wait <= 0) return this.updateOf(callId);
    call.timer = setTimeout(() => {
      call.timer = undefined;
      // Output that comes before the queued update is made goes out with it, not in one of its own.
      call.sentAt = Date.now();
      this.#send(callId);
    }, wait);
    return undefined;
  }

  /** The in-progress update with the call's output so far; undefined once the call has ended. */
  updateOf(callId: string): SessionUpdate | undefined {
    const call = this.#calls.get(callId);
    if (call === undefined) return undefined;
    call.sentAt = Date.now();
    const output: ToolCallContent = {
      type: 'content',
      // Fenced and escaped like the result that replaces it: the output is as hostile.
      content: { type: 'text', text: codeBlockMarkdown(call.cut ? `${CUT_LINE}\n${call.tail}` : call.tail) },
    };
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId: callId,
      status: 'in_progress',
      content: [...this.#contentBefore(callId), output],
    };
  }

  /** The call ended: its output waiting for the interval is dropped (the result replaces it). */
  end(callId: string): void {
    const call = this.#calls.get(callId);
    if (call?.timer !== undefined) clearTimeout(call.timer);
    this.#calls.delete(callId);
  }

  /** The turn ended: nothing more is sent. */
  dispose(): void {
    for (const callId of [...this.#calls.keys()]) this.end(callId);
  }
}
