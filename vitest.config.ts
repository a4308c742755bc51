import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));

export default defineConfig({
  resolve: {
    // Tests import the workspace packages from their source, so no build is needed first.
    alias: [
      { find: /^@youyou\/agent\/storage$/, replacement: `${packagesDir}agent/src/storage/index.ts` },
      { find: /^@youyou\/agent\/testing$/, replacement: `${packagesDir}agent/src/testing/index.ts` },
      { find: /^@youyou\/([a-z-]+)$/, replacement: `${packagesDir}$1/src/index.ts` },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    // The abandoned-session tests call gc() to make a FinalizationRegistry fire.
    execArgv: ['--expose-gc'],
    testTimeout: 20_000,
  },
});
