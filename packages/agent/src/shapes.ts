/**
 * One instance of each class the turn loop makes and drops at a high rate, kept for the life of the process.
 *
 * V8 gives the instances of a class their hidden class through transitions that it holds weakly, and optimized
 * code refers to those hidden classes weakly too. When a full garbage collection finds no instance of such a
 * class alive (between two turns, between two sessions), the hidden class is collected and every optimized
 * function that used it is thrown away: the next turn runs unoptimized until it is compiled again. One idle
 * instance per class keeps the hidden class, and the code, alive. Measured with `node --trace-deopt` on the tool
 * loop benchmark: every full collection deoptimized a dozen of the loop's functions before.
 */
const exemplars: object[] = [];

/** Keeps `exemplar` (a fresh, idle instance) alive so that its hidden class outlives every other instance. */
export function keepShape(exemplar: object): void {
  exemplars.push(exemplar);
}
