import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The root of this repository. */
export const repository = fileURLToPath(new URL('../../../../', import.meta.url));

/** What a script run ended with. */
export interface ScriptRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `scripts/<name>` with node in a child process and waits for it to exit. */
export function runScript(name: string, args: readonly string[]): Promise<ScriptRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(repository, 'scripts', name), ...args], (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr });
    });
  });
}

/** Temporary repositories for a test file: `create` writes one, `removeAll` (after each test) deletes them. */
export function temporaryRepositories(prefix: string): {
  create: (files: Record<string, string>) => string;
  removeAll: () => void;
} {
  const folders: string[] = [];
  return {
    create(files) {
      const root = mkdtempSync(join(tmpdir(), prefix));
      folders.push(root);
      for (const [path, source] of Object.entries(files)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), source);
      }
      return root;
    },
    removeAll() {
      for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
    },
  };
}
