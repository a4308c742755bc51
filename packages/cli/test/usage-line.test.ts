import type { UsageTotals } from '@youyou/agent';
import { expect, test } from 'vitest';
import { formatCost, sessionUsageReport, turnUsageLine } from '../src/chat/usage-line.js';

const TOTALS: UsageTotals = {
  inputTokens: 4_000,
  outputTokens: 100,
  cachedInputTokens: 1_024,
  cacheWriteTokens: 300,
  reasoningTokens: 12,
  modelCalls: 2,
};

test('costs: cents from a dollar, four decimals below, a trace as <$0.0001, nothing as $0', () => {
  expect(formatCost(12.345)).toBe('$12.35');
  expect(formatCost(0.01234)).toBe('$0.0123');
  expect(formatCost(0.00004)).toBe('<$0.0001');
  expect(formatCost(0)).toBe('$0');
});

test('the turn line names only the parts the server reported, and the cost only when it is known', () => {
  expect(turnUsageLine(TOTALS)).toBe('4,000 in (1,024 cached, 300 cache write) · 100 out (12 reasoning)');
  expect(
    turnUsageLine({ ...TOTALS, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: 1.5 }),
  ).toBe('4,000 in · 100 out · $1.50');
  expect(turnUsageLine({ ...TOTALS, modelCalls: 0 })).toBeUndefined();
});

test('/usage: every figure, an unknown cost says so, a model id cannot move the cursor', () => {
  const report = sessionUsageReport({ totals: TOTALS, modelId: 'evil\u001b[2Jmodel', color: false });
  expect(report).toMatch(/^model calls +2$/m);
  expect(report).toMatch(/^input tokens +4,000$/m);
  expect(report).toMatch(/^ {2}cache write +300$/m);
  expect(report).toMatch(/^cost +unknown \(no price for /m);
  expect(report).not.toContain('\u001b');
  expect(sessionUsageReport({ totals: { ...TOTALS, costUsd: 0.25 }, modelId: 'm', color: false })).toMatch(
    /^cost +\$0\.2500$/m,
  );
  expect(sessionUsageReport({ totals: undefined, modelId: 'm', color: false })).toBe(
    'No model usage in this session yet.\n',
  );
});
