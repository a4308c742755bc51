import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { useCliHarness } from './support/harness.js';
import { runShellTurn } from './support/shell-turn.js';

const harness = useCliHarness();

/** A Unix-socket listener that counts the connections it accepted. */
interface Listener {
  path: string;
  connections: number;
  server: Server;
}

const listeners: Listener[] = [];

/** Listens on `socketPath`; undefined when this user may not create it there (a /run that is not ours). */
async function listen(socketPath: string): Promise<Listener | undefined> {
  const server = createServer((socket) => {
    listener.connections += 1;
    // The probe hangs up as soon as it is connected: the greeting may meet a closed socket.
    socket.on('error', () => undefined);
    socket.end('hello from the host\n');
  });
  const listener: Listener = { path: socketPath, connections: 0, server };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, resolve);
    });
  } catch {
    return undefined;
  }
  listeners.push(listener);
  return listener;
}

afterEach(async () => {
  for (const listener of listeners.splice(0)) {
    await new Promise<void>((resolve) => listener.server.close(() => resolve()));
    await rm(listener.path, { force: true });
  }
});

/** A command that tries to connect to each socket in turn and prints one line per attempt. */
function connectEach(paths: readonly string[]): string {
  // Connecting is the effect: PostgreSQL, for one, says nothing until the client speaks.
  const script =
    'const net = require("net"); const paths = process.argv.slice(1); let left = paths.length;' +
    'const done = () => { if (--left === 0) process.exit(0); };' +
    'for (const p of paths) { const s = net.connect(p);' +
    's.on("connect", () => { console.log("CONNECTED " + p); s.destroy(); done(); });' +
    's.on("error", (e) => { console.log("FAILED " + e.code + " " + p); done(); }); }';
  return `"${process.execPath}" -e '${script}' ${paths.map((entry) => `"${entry}"`).join(' ')}`;
}

describe('without network, Unix sockets outside the workspace are out of reach', () => {
  test('listeners under the host /tmp, beside the workspace and in /run see no connection; one inside does', async () => {
    const { root, workspace } = harness.sandbox;
    const unique = `${process.pid}-${Math.floor(Math.random() * 1e9)}`;
    const inside = await listen(path.join(workspace, 'inside.sock'));
    const beside = await listen(path.join(root, 'beside.sock'));
    const hostTmp = await listen(`/tmp/youyou-test-${unique}.sock`);
    // Creating a socket in /run needs root (or a writable /run): skipped otherwise.
    const inRun = await listen(`/run/youyou-test-${unique}.sock`);
    expect(inside && beside && hostTmp).toBeTruthy();
    const outside = [beside, hostTmp, inRun].filter((entry) => entry !== undefined);
    const postgres = '/var/run/postgresql/.s.PGSQL.5432';

    const { output } = await runShellTurn(harness, {
      command: connectEach([inside!.path, ...outside.map((entry) => entry.path), postgres]),
    });
    // The connector works: the socket inside the workspace was reached.
    await vi.waitFor(() => expect(inside!.connections).toBe(1), { timeout: 5000, interval: 20 });
    expect(output).toContain(`CONNECTED ${inside!.path}`);
    for (const listener of outside) expect(listener.connections, listener.path).toBe(0);
    if (existsSync(postgres)) {
      expect(output).not.toContain(`CONNECTED ${postgres}`);
      expect(output).toContain(`FAILED ENOENT ${postgres}`);
    }
  });

  test('with the network open, the sockets of /run stay reachable (name resolution may live there)', async () => {
    const unique = `${process.pid}-${Math.floor(Math.random() * 1e9)}`;
    const inRun = await listen(`/run/youyou-test-${unique}.sock`);
    if (inRun === undefined) return;
    await runShellTurn(harness, { command: connectEach([inRun.path]), args: ['--allow-network'] });
    await vi.waitFor(() => expect(inRun.connections).toBe(1), { timeout: 5000, interval: 20 });
  });
});
