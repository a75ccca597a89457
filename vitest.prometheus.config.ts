import { defineConfig } from 'vitest/config';

// A real Prometheus on 127.0.0.1 (test/prometheus/server.ts starts it; README "When evacuations may start").
export default defineConfig({
  test: {
    include: ['test/prometheus/**/*.test.ts'],
    globalSetup: ['test/prometheus/announce.ts'],
    testTimeout: 90_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
