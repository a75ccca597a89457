import { defineConfig } from 'vitest/config';

// The chaos soak's own stories: a 24-round soak at a fixed seed and two soaks in child processes
// (about 3 minutes of real time together, most of the default run's). `npm run test:soak` runs them;
// .ci/run runs it after `npm test`, beside the soak at the commit's seed.
export const soakTests = ['test/chaos/soak.test.ts', 'test/chaos/parallel.test.ts'];

export default defineConfig({
  test: {
    include: soakTests,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
