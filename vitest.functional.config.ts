import { defineConfig } from 'vitest/config';

// Talks to a real cloud named by OS_CLOUD/clouds.yaml or OS_* (see README "Functional tests").
export default defineConfig({
  test: {
    include: ['test/functional/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
