/**
 * The usage the CLI shows: a dim line after each answer (the turn's tokens and cost) and `/usage` (the
 * session's). The numbers come from the runtime's totals, which add up the provider's own reports.
 */
import type { UsageTotals } from '@youyou/agent';
import { neutralizeLine } from '../text/terminal-text.js';
import { createStyles } from './format.js';

const COUNT = new Intl.NumberFormat('en-US');

function tokens(count: number): string {
  return COUNT.format(count);
}

/** A cost in US dollars: cents for a dollar or more, four decimals below, `<$0.0001` for a trace. */
export function formatCost(costUsd: number): string {
  if (costUsd === 0) return '$0';
  if (costUsd < 0.0001) return '<$0.0001';
  return `$${costUsd.toFixed(costUsd >= 1 ? 2 : 4)}`;
}

/**
 * The line after an answer, e.g. `1,200 in (900 cached) · 80 out (30 reasoning) · $0.0012`; undefined when
 * the server reported no usage for the turn. The cost is left out when the model has no known price.
 */
export function turnUsageLine(totals: UsageTotals): string | undefined {
  if (totals.modelCalls === 0) return undefined;
  const input = [tokens(totals.inputTokens), 'in'];
  const inputParts: string[] = [];
  if (totals.cachedInputTokens > 0) inputParts.push(`${tokens(totals.cachedInputTokens)} cached`);
  if (totals.cacheWriteTokens > 0) inputParts.push(`${tokens(totals.cacheWriteTokens)} cache write`);
  if (inputParts.length > 0) input.push(`(${inputParts.join(', ')})`);
  const output = [tokens(totals.outputTokens), 'out'];
  if (totals.reasoningTokens > 0) output.push(`(${tokens(totals.reasoningTokens)} reasoning)`);
  const parts = [input.join(' '), output.join(' ')];
  if (totals.costUsd !== undefined) parts.push(formatCost(totals.costUsd));
  return parts.join(' · ');
}

/** What `/usage` prints: the session's totals, one figure a line. */
export function sessionUsageReport(options: {
  totals: UsageTotals | undefined;
  modelId: string;
  color: boolean;
}): string {
  const styles = createStyles(options.color);
  const totals = options.totals;
  if (totals === undefined || totals.modelCalls === 0) {
    return `No model usage in this session yet.\n`;
  }
  const rows: [string, string][] = [
    ['model calls', tokens(totals.modelCalls)],
    ['input tokens', tokens(totals.inputTokens)],
    ['  cached', tokens(totals.cachedInputTokens)],
    ['  cache write', tokens(totals.cacheWriteTokens)],
    ['output tokens', tokens(totals.outputTokens)],
    ['  reasoning', tokens(totals.reasoningTokens)],
    [
      'cost',
      totals.costUsd === undefined
        ? `unknown (no price for ${neutralizeLine(options.modelId)})`
        : formatCost(totals.costUsd),
    ],
  ];
  const lines = rows.map(([label, value]) => `${styles.dim(label.padEnd(15))}${value}`);
  return `${lines.join('\n')}\n`;
}
