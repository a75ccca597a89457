import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { soakTests } from './vitest.soak.config.ts';

// test/real needs a real cluster (`npm run test:real`, skipped in one line without one). test/prometheus needs
// a real Prometheus binary (Debian's package): in the default run only where it is installed; `npm run test:prometheus` runs it alone (and says why it skips).
const prometheus = existsSync(process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [
      'test/functional/**',
      'test/real/**',
      'node_modules/**',
      ...(prometheus ? [] : ['test/prometheus/**']),
      ...soakTests, // `npm run test:soak`, which .ci/run runs too
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
