/**
 * Loaded with `node --expose-gc --require bench/soak/gc-probe.cjs` into a process under soak (youyou serve,
 * the interactive CLI): on SIGUSR2 it runs a full gc and writes the process's memory, as JSON, to
 * $SOAK_PROBE_FILE. A measuring instrument only: the runtime itself never forces a gc, and without a signal
 * this file does nothing.
 */
const { renameSync, writeFileSync } = require('node:fs');

const file = process.env.SOAK_PROBE_FILE;
if (file !== undefined && typeof globalThis.gc === 'function') {
  process.on('SIGUSR2', () => {
    setImmediate(() => {
      globalThis.gc();
      setImmediate(() => {
        globalThis.gc();
        const memory = process.memoryUsage();
        writeFileSync(`${file}.tmp`, JSON.stringify(memory));
        renameSync(`${file}.tmp`, file);
      });
    });
  });
}
