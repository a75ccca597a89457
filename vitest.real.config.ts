import { defineConfig } from 'vitest/config';

// A real Kubernetes with a real kubelet, and a real Nova (README "Real cluster tests"). `npm run test:real` goes
// through test/real/run.ts, which skips in one line without DRAINER_REAL_KUBECONFIG. The files run in the order
// of their names, one at a time: they share one cluster, the first installs drainer and the last removes it.
export default defineConfig({
  test: {
    include: ['test/real/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    pool: 'forks',
    passWithNoTests: true,
    sequence: { sequencer: (await import('./test/real/support/sequencer.ts')).ByName },
    reporters: ['default', './test/real/support/reporter.ts'],
  },
});
