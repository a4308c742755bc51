import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import { countOf } from '../text/plural.js';
import { ConfinementError, type OpenedInside, openInside, replaceContent } from './confined-fs.js';
import {
  argumentsOf,
  displayPath,
  errorCode,
  errorText,
  failure,
  notRegularFile,
  readOnlyText,
  resolveInWorkspace,
  success,
  type Workspace,
} from './workspace.js';

/** The write_file tool: creates or replaces a whole file, creating its folders. */
export function createWriteFileTool(workspace: Workspace): ToolHandler {
  return {
    name: 'write_file',
    description:
      'Writes a whole file of the workspace, creating it and any missing folders, or replacing what it held. ' +
      'To change part of an existing file, use edit_file instead.',
    parametersSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file, relative to the workspace root.' },
        content: { type: 'string', description: 'The complete new content of the file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    isMutating: true,
    // Writing the same whole content again changes nothing more: after a crash it simply runs again.
    idempotent: true,
    execute: (input) => writeFileTool(workspace, input),
  };
}

/**
 * The file at `real` opened for writing: the existing one (not truncated yet, so that refusing it changes
 * nothing), or a new one created with O_EXCL. A file that appears or vanishes in between is tried once more.
 */
async function openForWriting(
  workspace: Workspace,
  real: string,
): Promise<{ opened: OpenedInside; existed: boolean }> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return { opened: await openInside({ workspace, real, purpose: 'write' }), existed: true };
    } catch (error) {
      if (errorCode(error) !== 'ENOENT' || attempt > 0) throw error;
    }
    try {
      return {
        opened: await openInside({ workspace, real, purpose: 'write', create: true }),
        existed: false,
      };
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
  }
}

async function writeFileTool(workspace: Workspace, input: ToolInput): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const given = String(args.path ?? '');
  if (typeof args.content !== 'string') return failure('content must be a string holding the whole file');
  if (workspace.readOnly) return failure(readOnlyText('write_file'));
  const content = args.content;
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  try {
    const { opened, existed } = await openForWriting(workspace, resolved.path);
    try {
      if (!opened.stats.isFile()) return failure(notRegularFile(given));
      await replaceContent(opened.handle, Buffer.from(content, 'utf8'));
    } finally {
      await opened.handle.close();
    }
    const bytes = Buffer.byteLength(content);
    return success(
      `${existed ? 'Replaced' : 'Created'} ${displayPath(workspace, opened.real)} (${countOf(bytes, 'byte')} written)`,
    );
  } catch (error) {
    if (error instanceof ConfinementError) return failure(error.message);
    const code = errorCode(error);
    if (code === 'EISDIR') return failure(`'${given}' is a directory; give a file path`);
    if (code === 'ENXIO') return failure(notRegularFile(given));
    return failure(`cannot write '${given}': ${errorText(error)}`);
  }
}
