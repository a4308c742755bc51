/**
 * The tables and the goals of a benchmark run, from the drivers' results: `results[file]` holds one
 * `{ main, durable }` per repeat (see driver.mjs). Every ratio is taken within one repeat (the two runtimes
 * measured minutes apart on the same machine), then the median and the spread of those ratios are shown.
 */
import { HISTORY_MESSAGES, PARALLEL_DELAY_MS, STREAM_DELTAS, TOOL_STEPS } from './workloads.mjs';

/**
 * Reads one figure of one repeat's result for one state (`steady` or `cold`), or undefined: from the
 * median of the workload's measured runs, or from their fastest run when `fastest` is set.
 */
const metrics = {
  delta: (r, state, f) => (r.main.stream[state][f('ms')] * 1000) / STREAM_DELTAS,
  first: (r, state, f) => r.main.stream[state][f('firstMs')],
  tool: (r, state, f) => (r.main.toolLoop[state][f('ms')] * 1000) / TOOL_STEPS,
  parallel: (r, state, f) => r.main.parallel[state][f('ms')],
  inFlight: (r, state) => r.main.parallel[state].maxInFlight,
  empty: (r, state, f) => r.main.historyEmpty[state][f('ms')] * 1000,
  long: (r, state, f) => r.main.historyLong[state][f('ms')] * 1000,
  growth: (r, state, f) =>
    ((r.main.historyLong[state][f('ms')] - r.main.historyEmpty[state][f('ms')]) * 1000) / HISTORY_MESSAGES,
  durable: (r, state, f) => {
    const durable = r.durable?.durable;
    return durable === undefined || durable.unavailable
      ? undefined
      : (durable[state][f('ms')] * 1000) / TOOL_STEPS;
  },
  rss: (r) => r.main.peakRssMb,
  rssDurable: (r) => (r.durable?.durable === undefined ? undefined : r.durable.peakRssMb),
  timerFloor: (r, state, f) => r.main.timerFloor?.[state][f('ms')],
};
const ofMedian = (field) => field;
const ofFastest = (field) => `${field}Min`;
/** One figure: `metric` of repeat result `r`, from the median run or from the fastest. */
const figureOf = (metric, r, state, fastest = false) =>
  metrics[metric](r, state, fastest ? ofFastest : ofMedian);

function median(values) {
  const sorted = values.filter((value) => value !== undefined).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Median, minimum and maximum of the defined values, or undefined when there is none. */
function spreadOf(values) {
  const defined = values.filter((value) => value !== undefined && Number.isFinite(value));
  if (defined.length === 0) return undefined;
  return {
    median: median(defined),
    min: Math.min(...defined),
    max: Math.max(...defined),
    count: defined.length,
  };
}

export function format(value) {
  const size = Math.abs(value);
  if (size >= 100) return value.toFixed(0);
  if (size >= 10) return value.toFixed(1);
  if (size >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

function formatRatio(ratio) {
  // Two decimals near 1, where a goal such as W3's 1.05× would otherwise hide in the rounding.
  return ratio < 10 ? ratio.toFixed(2) : ratio.toFixed(1);
}

/** Builds the report's parts for one run's results. */
export function makeReport({ runtimes, results, repeats }) {
  const files = runtimes.map((runtime) => runtime.file);
  const values = (file, metric, state, fastest) =>
    results[file].map((r) => figureOf(metric, r, state, fastest));
  const stats = (file, metric, state, fastest) => spreadOf(values(file, metric, state, fastest));
  /**
   * The per-repeat ratios of `file`'s metric to `reference`'s (another file, or a function of the repeat
   * and `fastest`); `fastest`: of the fastest runs' figures rather than of the medians.
   */
  const ratios = (file, metric, state, reference, fastest = false) =>
    spreadOf(
      results[file].map((r, repeat) => {
        const value = figureOf(metric, r, state, fastest);
        const base =
          typeof reference === 'function'
            ? reference(repeat, fastest)
            : results[reference] && figureOf(metric, results[reference][repeat], state, fastest);
        return value === undefined || base === undefined || base <= 0 ? undefined : value / base;
      }),
    );
  const hasBaseline = files.includes('baseline');

  function cell(file, metric, state, { ratio = false, spread = true } = {}) {
    const value = stats(file, metric, state);
    if (value === undefined) return '—';
    let text = format(value.median);
    if (ratio && hasBaseline && file !== 'baseline') {
      const relative = ratios(file, metric, state, 'baseline');
      if (relative !== undefined) text += ` (${formatRatio(relative.median)}×)`;
    }
    if (spread && repeats > 1) text += ` [${format(value.min)}–${format(value.max)}]`;
    return text;
  }

  function table(state) {
    const withRss = state === 'steady';
    const header = [
      'runtime',
      'version',
      'W1 µs/delta',
      'W1 first delta ms',
      'W2 µs/tool round-trip',
      `W3 wall ms (ideal ${PARALLEL_DELAY_MS})`,
      'W3 max in flight',
      'W4 turn µs, empty',
      `W4 turn µs, ${HISTORY_MESSAGES.toLocaleString('en')} msgs`,
      'W4 µs/msg',
      'W5 µs/tool round-trip, SQLite',
      ...(withRss ? ['peak RSS MB, W1–W4', 'peak RSS MB, W5'] : []),
    ];
    const rows = runtimes.map((runtime) => {
      const file = runtime.file;
      const name = results[file][0].main.runtime;
      return [
        file === 'baseline' ? name : `\`${name}\``,
        runtime.version,
        cell(file, 'delta', state, { ratio: true }),
        cell(file, 'first', state),
        cell(file, 'tool', state, { ratio: true }),
        cell(file, 'parallel', state, { ratio: true }),
        cell(file, 'inFlight', state, { spread: false }),
        cell(file, 'empty', state, { ratio: true }),
        cell(file, 'long', state, { ratio: true }),
        cell(file, 'growth', state),
        cell(file, 'durable', state, { ratio: true }),
        ...(withRss ? [cell(file, 'rss', state), cell(file, 'rssDurable', state)] : []),
      ];
    });
    return [
      `| ${header.join(' | ')} |`,
      `|${header.map((_, index) => (index < 2 ? '---' : '---:')).join('|')}|`,
      ...rows.map((row) => `| ${row.join(' | ')} |`),
    ].join('\n');
  }

  /** W3's floor: its timers alone, measured by the baseline's driver in the same state. */
  function timerFloor(state) {
    if (!hasBaseline) return undefined;
    return stats('baseline', 'timerFloor', state);
  }

  /**
   * The goals of issue 13, judged on the steady state, each as a line `- goal: figure, met|missed`. The
   * verdict is on the medians; the same figure from each workload's fastest run follows, as what the
   * runtime costs when the shared machine leaves it alone.
   */
  function goals() {
    const us = 'youyou';
    if (!files.includes(us)) return [];
    const lines = [];
    const judge = (label, measure, limit, unit) => {
      const spread = measure(false);
      if (spread === undefined) {
        lines.push(`- ${label}: not measured`);
        return;
      }
      const figure = unit === '×' ? formatRatio : format;
      const shown = (value) =>
        `${figure(value.median)}${unit}${value.count > 1 ? ` [${figure(value.min)}–${figure(value.max)}]` : ''}`;
      const verdict = spread.median <= limit ? 'met' : 'missed';
      const fastest = measure(true);
      const fastestText =
        fastest === undefined
          ? ''
          : `; fastest runs: ${shown(fastest)}, ${fastest.median <= limit ? 'met' : 'missed'}`;
      lines.push(`- ${label}: ${shown(spread)}, **${verdict}**${fastestText}`);
    };
    if (hasBaseline) {
      const toBaseline = (metric) => (fastest) => ratios(us, metric, 'steady', 'baseline', fastest);
      judge('W1 ≤ 2× the bare loop per delta', toBaseline('delta'), 2, '×');
      judge('W2 ≤ 4× the bare loop per tool round trip', toBaseline('tool'), 4, '×');
      judge("W3 ≤ 1.05× the bare loop's wall time", toBaseline('parallel'), 1.05, '×');
    }
    judge(
      'W4 ≤ 0.05 µs per history message',
      (fastest) => stats(us, 'growth', 'steady', fastest),
      0.05,
      ' µs',
    );
    if (files.includes('pi-agent')) {
      const rss = ratios(us, 'rss', 'steady', 'pi-agent');
      judge("peak RSS (W1–W4) ≤ pi-agent-core's", (fastest) => (fastest ? undefined : rss), 1, '×');
    }
    const peers = files.filter((file) => file !== us && file !== 'baseline');
    const workloads = [
      ['W1 µs/delta', 'delta'],
      ['W1 first delta', 'first'],
      ['W2 µs/tool round-trip', 'tool'],
      ['W3 wall', 'parallel'],
      ['W4 empty turn', 'empty'],
      ['W4 turn after the history', 'long'],
      ['W5 µs/tool round-trip', 'durable'],
    ];
    for (const [label, metric] of workloads) {
      const measured = peers.filter((peer) => stats(peer, metric, 'steady') !== undefined);
      if (measured.length === 0) continue;
      // Per repeat: ours over the best peer's figure of the same repeat.
      const best = (repeat, fastest) => {
        const figures = measured.map((peer) => figureOf(metric, results[peer][repeat], 'steady', fastest));
        return Math.min(...figures.filter((figure) => figure !== undefined));
      };
      const bestPeer = measured.reduce((a, b) =>
        stats(a, metric, 'steady').median <= stats(b, metric, 'steady').median ? a : b,
      );
      judge(
        `ahead of every peer, ${label} (ours / the best peer's, ${results[bestPeer][0].main.runtime})`,
        (fastest) => ratios(us, metric, 'steady', best, fastest),
        0.999_999,
        '×',
      );
    }
    return lines;
  }

  return { table, timerFloor, goals };
}
