import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** The files of a workspace whose text is the project's instructions to the agent, in prompt order. */
export const INSTRUCTION_FILES = ['AGENTS.md', path.join('.youyou', 'instructions.md')] as const;

/** The most of one instructions file that goes into the prompt; a longer one is cut, with a warning. */
const MAX_INSTRUCTIONS_BYTES = 64 * 1024;

/**
 * The project instructions of the workspace (`AGENTS.md`, the convention shared by coding agents, then
 * `.youyou/instructions.md`), each as one system instruction naming its file. Missing files are skipped;
 * one that cannot be read, or is not a regular file, is a warning.
 */
export function projectInstructions(options: { workspace: string; warn: (text: string) => void }): string[] {
  const instructions: string[] = [];
  for (const name of INSTRUCTION_FILES) {
    const file = path.join(options.workspace, name);
    let text: string;
    try {
      const info = statSync(file);
      if (!info.isFile()) {
        options.warn(`${file} is not a file; its project instructions are not used`);
        continue;
      }
      const bytes = readFileSync(file);
      if (bytes.length > MAX_INSTRUCTIONS_BYTES) {
        options.warn(
          `${file} is ${bytes.length} bytes; only its first ${MAX_INSTRUCTIONS_BYTES} go into the prompt`,
        );
      }
      text = bytes.subarray(0, MAX_INSTRUCTIONS_BYTES).toString('utf8').trim();
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') continue;
      options.warn(`${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (text === '') continue;
    instructions.push(`Project instructions from ${name} in the workspace:\n\n${text}`);
  }
  return instructions;
}
