import { defineConfig } from 'vitest/config';

// The consumer test (test/consumer): packs the packages and installs them in a project outside the repository,
// so it imports nothing from the workspace's sources and runs apart from `npm test`.
export default defineConfig({
  test: {
    include: ['test/consumer/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 900_000,
  },
});
