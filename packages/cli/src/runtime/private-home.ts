import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * The youyou home (`~/.youyou` or `$YOUYOU_HOME`) holds every prompt, answer and tool output (youyou.db), the
 * prompt history and maybe API keys (config.json): it is made readable by its owner only. A home created by
 * youyou is created 0700. One that already exists with access for others is tightened to 0700 when it belongs
 * to the user and is a folder of its own (not `/`, the user's home folder or a shared sticky folder such as
 * /tmp, which a stray YOUYOU_HOME could name), and the files below get 0600.
 */

/** Files of the home that are tightened to 0600 when they exist: the database (with WAL and SHM), config, history. */
const PRIVATE_FILES = ['youyou.db', 'youyou.db-wal', 'youyou.db-shm', 'config.json', 'history'];

/** Creates the home folder 0700, or tightens an existing one and its files; returns what it tightened. */
export function preparePrivateHome(home: string): string[] {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const tightened: string[] = [];
  const uid = process.getuid?.();
  const stats = statSync(home);
  const shared = (stats.mode & 0o1000) !== 0 || home === path.parse(home).root || home === homedir();
  if (uid !== undefined && stats.uid === uid && !shared && (stats.mode & 0o077) !== 0) {
    chmodSync(home, 0o700);
    tightened.push(home);
  }
  for (const name of PRIVATE_FILES) {
    const file = path.join(home, name);
    let fileStats: ReturnType<typeof statSync>;
    try {
      fileStats = statSync(file);
    } catch {
      continue;
    }
    if (!fileStats.isFile() || fileStats.uid !== uid || (fileStats.mode & 0o077) === 0) continue;
    chmodSync(file, 0o600);
    tightened.push(file);
  }
  return tightened;
}
