import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import { ConfinementError, type OpenedInside, openInside, replaceContent } from './confined-fs.js';
import {
  argumentsOf,
  displayPath,
  errorCode,
  errorText,
  failure,
  looksBinary,
  notRegularFile,
  readOnlyText,
  resolveInWorkspace,
  success,
  type Workspace,
} from './workspace.js';

/** Decodes UTF-8 keeping a BOM as U+FEFF, so that writing the text back writes the BOM too. */
const UTF8_KEEPING_BOM = new TextDecoder('utf-8', { ignoreBOM: true });

/** `text` with every line feed that has no carriage return before it written as CRLF. */
function toCrlf(text: string): string {
  return text.replace(/(?<!\r)\n/g, '\r\n');
}

/** True when most line breaks of `text` are CRLF: edits then write their line breaks as CRLF too. */
function usesCrlf(text: string): boolean {
  const crlf = text.split('\r\n').length - 1;
  return crlf > 0 && crlf >= text.split('\n').length - 1 - crlf;
}

/**
 * The offset of the first byte that does not start a valid UTF-8 character (a stray continuation byte, a
 * truncated or overlong sequence, a surrogate, a code point past U+10FFFF), or -1 when every byte is valid.
 */
function firstInvalidByte(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index] as number;
    if (lead < 0x80) {
      index += 1;
      continue;
    }
    const length =
      lead >= 0xc2 && lead <= 0xdf
        ? 2
        : lead >= 0xe0 && lead <= 0xef
          ? 3
          : lead >= 0xf0 && lead <= 0xf4
            ? 4
            : 0;
    if (length === 0 || index + length > bytes.length) return index;
    const second = bytes[index + 1] as number;
    // The second byte's range rules out overlong forms, surrogates and code points past U+10FFFF.
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    if (second < low || second > high) return index;
    for (let offset = 2; offset < length; offset += 1) {
      const next = bytes[index + offset] as number;
      if (next < 0x80 || next > 0xbf) return index;
    }
    index += length;
  }
  return -1;
}

/** How often `needle` occurs in `text`, counting non-overlapping occurrences as a replace would. */
function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length)) {
    count += 1;
  }
  return count;
}

/** The edit_file tool: replaces an exact piece of text in a file. */
export function createEditFileTool(workspace: Workspace): ToolHandler {
  return {
    name: 'edit_file',
    description:
      'Replaces exact text in an existing file: oldString must appear exactly once (copy it from read_file, ' +
      'without the line-number prefix, white space included), unless replaceAll is true, which replaces every ' +
      'occurrence. Add surrounding lines to oldString to make it unique.',
    parametersSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file, relative to the workspace root.' },
        oldString: { type: 'string', description: 'The exact text to replace.' },
        newString: { type: 'string', description: 'The text to put in its place.' },
        replaceAll: {
          type: 'boolean',
          description: 'Replace every occurrence instead of exactly one. Default false.',
        },
      },
      required: ['path', 'oldString', 'newString'],
      additionalProperties: false,
    },
    isMutating: true,
    execute: (input) => editFileTool(workspace, input),
  };
}

async function editFileTool(workspace: Workspace, input: ToolInput): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const given = String(args.path ?? '');
  const { oldString, newString } = args;
  if (typeof oldString !== 'string' || typeof newString !== 'string') {
    return failure('oldString and newString must be strings');
  }
  if (oldString === '')
    return failure('oldString is empty; give the exact text to replace (use write_file to create a file)');
  if (oldString === newString) return failure('oldString and newString are the same; nothing would change');
  if (workspace.readOnly) return failure(readOnlyText('edit_file'));
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  let opened: OpenedInside;
  try {
    // Read and written through one descriptor, opened and checked inside the workspace.
    opened = await openInside({ workspace, real: resolved.path, purpose: 'edit' });
  } catch (error) {
    if (error instanceof ConfinementError) return failure(error.message);
    const code = errorCode(error);
    if (code === 'ENOENT') return failure(`'${given}' does not exist; use write_file to create it`);
    if (code === 'EISDIR') return failure(`'${given}' is a directory; give a file path`);
    if (code === 'ENXIO') return failure(notRegularFile(given));
    return failure(`cannot read '${given}': ${errorText(error)}`);
  }
  try {
    return await editOpened({
      opened,
      given,
      oldString,
      newString,
      replaceAll: args.replaceAll === true,
      workspace,
      signal: input.signal,
    });
  } finally {
    await opened.handle.close();
  }
}

/** Replaces the text in the open file; the result for the model. */
async function editOpened(options: {
  opened: OpenedInside;
  given: string;
  oldString: string;
  newString: string;
  replaceAll: boolean;
  workspace: Workspace;
  signal: AbortSignal;
}): Promise<ToolOutput> {
  const { opened, given, oldString, newString } = options;
  if (!opened.stats.isFile()) return failure(notRegularFile(given));
  let bytes: Buffer;
  try {
    bytes = await opened.handle.readFile({ signal: options.signal });
  } catch (error) {
    return failure(`cannot read '${given}': ${errorText(error)}`);
  }
  if (looksBinary(bytes))
    return failure(`'${given}' is a binary file (it holds NUL bytes); edit_file only edits text`);
  const invalidAt = firstInvalidByte(bytes);
  if (invalidAt !== -1) {
    const line = bytes.subarray(0, invalidAt).filter((byte) => byte === 0x0a).length + 1;
    return failure(
      `'${given}' is not valid UTF-8 text (byte 0x${(bytes[invalidAt] as number).toString(16)} on line ${line} ` +
        'is not part of a UTF-8 character; it is probably Latin-1 or another legacy encoding); edit_file ' +
        'only edits UTF-8 files and left it unchanged. Convert it first (for example with iconv in the ' +
        'shell) or rewrite it whole with write_file',
    );
  }
  const text = UTF8_KEEPING_BOM.decode(bytes);
  // The model writes line breaks as \n; in a file whose lines end in \r\n both strings get the file's.
  const crlf = usesCrlf(text);
  let needle = oldString;
  let count = countOccurrences(text, needle);
  if (count === 0 && text.includes('\r\n') && /(?<!\r)\n/.test(oldString)) {
    needle = toCrlf(oldString);
    count = countOccurrences(text, needle);
  }
  const replacement = crlf ? toCrlf(newString) : newString;
  if (count === 0) {
    return failure(
      `oldString was not found in '${given}'; read the file again and copy the text exactly, white space and ` +
        'line breaks included, without the line-number prefix',
    );
  }
  if (count > 1 && !options.replaceAll) {
    return failure(
      `oldString appears ${count} times in '${given}'; add surrounding lines to make it unique, or set ` +
        'replaceAll to true to replace every occurrence',
    );
  }
  // split/join rather than String.replace, whose replacement string gives `$&` and friends a meaning.
  const updated = text.split(needle).join(replacement);
  try {
    await replaceContent(opened.handle, Buffer.from(updated, 'utf8'));
  } catch (error) {
    return failure(`cannot write '${given}': ${errorText(error)}`);
  }
  const shown = displayPath(options.workspace, opened.real);
  return success(`Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${shown}`);
}
