import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The suites scripts/test-node-lines.sh runs on every supported Node line: the core and the adapters. The CLI's
 * and the server's tests (tmux, Chromium, the built binary) run on the machine's Node only, with `npm test`.
 */
export const NODE_LINE_SUITES = [
  'agent',
  'ai-sdk',
  'anthropic',
  'mcp',
  'openai',
  'otel',
  'postgres',
  'sqlite',
];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: NODE_LINE_SUITES.map((name) => `packages/${name}/test/**/*.test.ts`),
  },
});
