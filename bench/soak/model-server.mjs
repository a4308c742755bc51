/**
 * What the CLI soaks share: an OpenAI-compatible Chat Completions server on 127.0.0.1 that streams ten
 * chunks of text with a 2 ms pause between them (the last chunk names the request's turn, see below), and
 * answers the runtime's memory requests with an empty list; a process's RSS from /proc; and the gc probe
 * (gc-probe.cjs) that measures a child's memory after a full gc.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

/** The last user text of a request, as a string. */
function lastUserText(messages) {
  const user = messages?.findLast((message) => message.role === 'user');
  if (user === undefined) return '';
  if (typeof user.content === 'string') return user.content;
  return (user.content ?? []).map((part) => part.text ?? '').join('');
}

/** Starts the server; resolves with it (its port in `address().port`). The answer ends `[end of: USER TEXT]`. */
export function startModelServer() {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', async () => {
      const parsed = JSON.parse(body || '{}');
      const system = parsed.messages?.find((message) => message.role === 'system')?.content ?? '';
      const systemText = typeof system === 'string' ? system : JSON.stringify(system);
      const memoryRequest = /^You (extract long-term memories|maintain a store of long-term memories)/.test(
        systemText,
      );
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta, finish) =>
        `data: ${JSON.stringify({
          id: 'soak',
          object: 'chat.completion.chunk',
          created: 0,
          model: parsed.model ?? 'soak',
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`;
      if (memoryRequest) {
        response.write(chunk({ role: 'assistant', content: '{"memories":[]}' }, null));
      } else {
        for (let index = 0; index < 10; index++) {
          response.write(chunk({ role: 'assistant', content: `part ${index} ` }, null));
          await new Promise((resolve) => setTimeout(resolve, 2));
          if (response.destroyed) return;
        }
        response.write(chunk({ content: `[end of: ${lastUserText(parsed.messages)}]` }, null));
      }
      response.write(chunk({}, 'stop'));
      response.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** A process's resident set, in bytes, from /proc. */
export function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** The `node` arguments that load gc-probe.cjs into a child (set SOAK_PROBE_FILE in its environment). */
export const PROBE_ARGS = [
  '--expose-gc',
  '--require',
  fileURLToPath(new URL('./gc-probe.cjs', import.meta.url)),
];

/** Asks a child started with PROBE_ARGS for a full gc; resolves with its `process.memoryUsage()` after it. */
export async function probeAfterGc(pid, file) {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 60_000;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} did not answer the gc probe`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** The child's environment's MALLOC_ARENA_MAX (glibc), passed on when the bench runs with it. */
export const MALLOC_ENV =
  process.env.MALLOC_ARENA_MAX === undefined ? {} : { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX };

/** The header's note of MALLOC_ARENA_MAX, when set. */
export const MALLOC_NOTE =
  process.env.MALLOC_ARENA_MAX === undefined ? '' : ` · MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX}`;

/** The columns of the V8 heap's size and of memory outside it, after a gc, in MB (for a table's row). */
export function heapColumns(afterGc) {
  const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);
  return `${mb(afterGc.heapTotal)} | ${mb(afterGc.external)} | ${mb(afterGc.arrayBuffers)}`;
}
