import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    // The abandoned-session tests call gc() to make a FinalizationRegistry fire.
    execArgv: ['--expose-gc'],
    testTimeout: 20_000,
  },
});
