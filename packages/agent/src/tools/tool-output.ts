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
