import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const agentSource = (path: string): string => fileURLToPath(new URL(`./packages/agent/src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests of the adapter packages run against the core's source, so no build is needed first.
    alias: [
      { find: /^@youyou\/agent$/, replacement: agentSource('index.ts') },
      { find: /^@youyou\/agent\/testing$/, replacement: agentSource('testing/index.ts') },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    // The abandoned-session tests call gc() to make a FinalizationRegistry fire.
    execArgv: ['--expose-gc'],
    testTimeout: 20_000,
  },
});
