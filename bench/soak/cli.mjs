/**
 * The CLI soak of issue 25: `node bench/soak/cli.mjs [--turns 500] [--sample-every 50]` starts the built
 * `youyou` (packages/cli/dist/bin.js) in a tmux session of its own (120×40) against the OpenAI-compatible
 * model server of model-server.mjs (node loads gc-probe.cjs), and sends that many messages in the one interactive session, waiting
 * for each answer's last line on the screen before the next. Every `--sample-every` turns the youyou
 * process's RSS is sampled as the OS sees it (/proc), then after a full gc the bench asks for. Prints a markdown table; exits 1 when RSS after the warm-up
 * (the first 100 turns) spreads by more than 10 MB.
 *
 * The session's history grows by two messages a turn (the model is sent all of it), so some growth is
 * the conversation itself: the table gives it per turn.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  heapColumns,
  MALLOC_ENV,
  MALLOC_NOTE,
  PROBE_ARGS,
  probeAfterGc,
  rssOf,
  startModelServer,
} from './model-server.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  return Number(index === -1 ? fallback : args[index + 1]);
};
const TURNS = option('--turns', 500);
const SAMPLE_EVERY = option('--sample-every', 50);
const WARM_UP = option('--warm-up', 100);
const LIMIT_MB = 10;
const BIN = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));

const root = mkdtempSync(join(os.tmpdir(), 'youyou-cli-soak-'));
mkdirSync(join(root, 'home'));
mkdirSync(join(root, 'workspace'));
const socket = `youyou-soak-${process.pid}`;
const tmux = (...tmuxArgs) => execFileSync('tmux', ['-L', socket, ...tmuxArgs], { encoding: 'utf8' });
const quote = (text) => `'${text.replace(/'/g, `'\\''`)}'`;

const model = await startModelServer();
const env = {
  PATH: process.env.PATH,
  HOME: root,
  YOUYOU_HOME: join(root, 'home'),
  SHELL: '/bin/sh',
  OPENAI_API_KEY: 'soak-key',
  TERM: 'xterm-256color',
  LANG: 'C.UTF-8',
  SOAK_PROBE_FILE: join(root, 'probe.json'),
  ...MALLOC_ENV,
};
const command = [
  'env',
  '-i',
  ...Object.entries(env).map(([name, value]) => `${name}=${quote(value)}`),
  quote(process.execPath),
  ...PROBE_ARGS.map(quote),
  quote(BIN),
  '--base-url',
  quote(`http://127.0.0.1:${model.address().port}/v1`),
].join(' ');
tmux(
  '-u',
  '-f',
  '/dev/null',
  'new-session',
  '-d',
  '-s',
  'main',
  '-x',
  '120',
  '-y',
  '40',
  '-c',
  join(root, 'workspace'),
  command,
);

/** Polls the screen until `text` shows (a state; at most 60 s: the machine may be loaded). */
async function waitForScreen(text) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const screen = tmux('capture-pane', '-p', '-t', 'main');
    if (screen.includes(text)) return;
    if (Date.now() > deadline) throw new Error(`the screen did not show ${text}:\n${screen}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const samples = [];
/** RSS as the OS sees it, then RSS and the V8 heap after a full gc (gc-probe.cjs; the measure's, not youyou's). */
async function sample(turns) {
  const rss = rssOf(pid);
  const afterGc = await probeAfterGc(pid, env.SOAK_PROBE_FILE);
  return { turns, rss, rssAfterGc: afterGc.rss, heapUsed: afterGc.heapUsed, afterGc };
}
const started = Date.now();
let pid;
try {
  await waitForScreen('›');
  // The pane runs `env`, which execs node: the pane's process is youyou itself.
  pid = Number(tmux('display-message', '-p', '-t', 'main', '#{pane_pid}').trim());
  samples.push(await sample(0));
  for (let turn = 1; turn <= TURNS; turn++) {
    const text = `soak message ${turn}`;
    tmux('send-keys', '-t', 'main', '-l', text);
    tmux('send-keys', '-t', 'main', 'Enter');
    await waitForScreen(`[end of: ${text}]`);
    if (turn % SAMPLE_EVERY === 0) {
      samples.push(await sample(turn));
      process.stderr.write(
        `${turn} turns: RSS after gc ${(samples.at(-1).rssAfterGc / 2 ** 20).toFixed(1)} MB\n`,
      );
    }
  }
} finally {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  model.close();
  rmSync(root, { recursive: true, force: true });
}
const seconds = (Date.now() - started) / 1000;

const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);
const afterWarmUp = samples.filter((sample) => sample.turns >= WARM_UP);
const low = Math.min(...afterWarmUp.map((row) => row.rssAfterGc));
const high = Math.max(...afterWarmUp.map((row) => row.rssAfterGc));
const first = afterWarmUp[0];
const last = afterWarmUp.at(-1);
const heapPerTurn = (last.heapUsed - first.heapUsed) / (last.turns - first.turns);
const spread = (high - low) / 2 ** 20;
const met = spread <= LIMIT_MB;
const lines = [
  `### The CLI: ${TURNS} turns in one interactive session (tmux)`,
  '',
  `${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC · Node ${process.version} · ${seconds.toFixed(0)} s · load average ${os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')} at the end${MALLOC_NOTE}`,
  '',
  '| turns | youyou RSS MB | RSS MB after a full gc | V8 heap used MB after it | V8 heap total MB | external MB | array buffers MB |',
  '|---:|---:|---:|---:|---:|---:|---:|',
  ...samples.map(
    (row) =>
      `| ${row.turns} | ${mb(row.rss)} | ${mb(row.rssAfterGc)} | ${mb(row.heapUsed)} | ${heapColumns(row.afterGc)} |`,
  ),
  '',
  `RSS after a full gc, after the warm-up (${WARM_UP} turns): ${mb(low)}–${mb(high)} MB, a spread of ${spread.toFixed(1)} MB (goal ≤ ${LIMIT_MB}); the heap grows ${(heapPerTurn / 1024).toFixed(2)} KB a turn (the conversation: two messages a turn). Goal ${met ? '**met**' : '**missed**'}.`,
];
process.stdout.write(`${lines.join('\n')}\n`);
process.exit(met ? 0 : 1);
