import type { AgentEventPayload } from '../kernel/event.js';
import type { ToolOutput } from '../ports/tool.js';

/** The most UTF-8 bytes of tool output that enter the context (1 MiB). */
export const TOOL_OUTPUT_LIMIT_BYTES = 1_048_576;

const TRUNCATION_NOTICE = '\n\n[output truncated at 1MB]';
const INVALID_RESULT_TEXT = 'returned an invalid result: expected { content: string, isError: boolean }';

/**
 * Cuts content whose UTF-8 form is over 1 MiB to the longest prefix that fits, ending on a character
 * boundary, and appends the truncation notice.
 */
export function truncateToolOutput(content: string): string {
  // A UTF-16 code unit never takes more than 3 UTF-8 bytes, so short content needs no encoding at all.
  if (content.length * 3 <= TOOL_OUTPUT_LIMIT_BYTES) return content;
  // encodeInto writes whole characters only (a surrogate pair is one unit) and stops at the first that
  // does not fit, so `read` is the length of the longest prefix within the limit.
  const { read } = new TextEncoder().encodeInto(content, new Uint8Array(TOOL_OUTPUT_LIMIT_BYTES));
  if (read === content.length) return content;
  return content.slice(0, read) + TRUNCATION_NOTICE;
}

/** An error result with this text. */
export function failed(content: string): ToolOutput {
  return { content: truncateToolOutput(content), isError: true };
}

/** A tool's answer made safe: anything that is not a ToolOutput becomes an error, extra fields are dropped. */
export function normalizeOutput(value: unknown, toolName: string): ToolOutput {
  if (typeof value === 'object' && value !== null) {
    const { content, isError } = value as { content?: unknown; isError?: unknown };
    if (typeof content === 'string' && typeof isError === 'boolean') {
      return { content: truncateToolOutput(content), isError };
    }
  }
  return failed(`Tool '${toolName}' ${INVALID_RESULT_TEXT}`);
}

/** The most characters of live output (`onOutput`) one call emits as `tool_output_delta` events. */
const LIVE_OUTPUT_LIMIT_CHARS = 1_048_576;
/** The most `tool_output_delta` events one call emits: many tiny deltas cost as much as one huge one. */
const LIVE_OUTPUT_LIMIT_DELTAS = 4096;
const LIVE_OUTPUT_NOTICE = '\n[live output truncated; the result has the whole output]';

/**
 * The `onOutput` of one call: each string becomes a `tool_output_delta` of `callId` through `emit` while
 * `call.running`, within the call's limits (then one notice, then nothing). Anything but a non-empty string is
 * ignored, and it never throws: the tool calling it is not to be stopped by a reader's failure. One closure per
 * call: every call gets a sink, and most tools never call it.
 */
export function liveOutputSink(
  emit: (payload: AgentEventPayload) => void,
  callId: string,
  call: { readonly running: boolean },
): (text: string) => void {
  let charsLeft = LIVE_OUTPUT_LIMIT_CHARS;
  let deltasLeft = LIVE_OUTPUT_LIMIT_DELTAS;
  return (text: unknown): void => {
    if (typeof text !== 'string' || text === '' || deltasLeft === 0 || !call.running) return;
    let kept = text.length > charsLeft ? text.slice(0, charsLeft) : text;
    // A cut between the halves of a surrogate pair would leave a lone half.
    if (kept.length < text.length && /[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
    charsLeft -= kept.length;
    deltasLeft -= 1;
    const full = kept.length < text.length || charsLeft === 0 || deltasLeft === 0;
    if (full) deltasLeft = 0;
    try {
      if (kept !== '') emit({ type: 'tool_output_delta', callId, text: kept });
      if (full) emit({ type: 'tool_output_delta', callId, text: LIVE_OUTPUT_NOTICE });
    } catch {
      // The event sink failed: the call's result is unaffected, and the live output is best effort.
    }
  };
}
