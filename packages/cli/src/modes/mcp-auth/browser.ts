import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** The program that opens a URL in the user's browser here, when there is one and a display to show it on. */
function opener(env: NodeJS.ProcessEnv): string | undefined {
  if (process.platform === 'darwin') return 'open';
  if (process.platform === 'win32') return undefined;
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return undefined;
  return 'xdg-open';
}

function onPath(program: string, env: NodeJS.ProcessEnv): boolean {
  for (const folder of (env.PATH ?? '').split(path.delimiter)) {
    if (folder === '') continue;
    try {
      accessSync(path.join(folder, program), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/**
 * Opens `url` (http or https only) with xdg-open or open, detached; false when there is no such program or
 * no display, so the caller's printed URL is the only way. The URL is one argument: no shell reads it.
 */
export function openInBrowser(url: URL, env: NodeJS.ProcessEnv): boolean {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  const program = opener(env);
  if (program === undefined || !onPath(program, env)) return false;
  const child = spawn(program, [url.href], { stdio: 'ignore', detached: true, env });
  child.on('error', () => undefined);
  child.unref();
  return true;
}
