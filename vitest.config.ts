import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { soakTests } from './vitest.soak.config.ts';

// test/real needs a real cluster (`npm run test:real`, skipped in one line without one). test/prometheus needs
// a real Prometheus binary (Debian's package): in the default run only where it is installed; `npm run test:prometheus` runs it alone (and says why it skips).
const prometheus = existsSync(process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus');

const exclude = [
  'test/functional/**',
  'test/real/**',
  'node_modules/**',
  ...(prometheus ? [] : ['test/prometheus/**']),
  ...soakTests, // `npm run test:soak`, which .ci/run runs too
  // A real logind booted in namespaces (root only): 73 s of one worker, 6 stories. `npm run test:shutdown`
  // runs them with the suite's own set-up (announce.ts), and .ci/run runs that in CI.
  'test/shutdown/**',
];

// Files that load nock, directly or through the Nova test helpers. nock 15 intercepts every
// net.Socket connect of its process from its import on (a missing UNIX socket then "connects" and
// closes), so these keep a process of their own. A new test that imports nock belongs here.
const nockUsers = [
  'test/plugins/nova/**/*.test.ts',
  'test/observability/logger.test.ts',
  'test/core/cloud-auth.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The agents the stories start never watch this machine's own logind (a CI runner's systemd): the
    // host's shutdown has its own suite against a logind it makes (`npm run test:shutdown`).
    env: { DRAINER_SHUTDOWN_ENABLED: 'false' },
    // Most stories wait on the sandbox's real time, not the CPU: three files run at once on 2 cores
    // (vitest's default is cores - 1, one file at a time here).
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        // A fresh process per file spent 1.7 to 3.6 s importing (client-node alone 0.9 s): 43 % of
        // test/core's time. These files share no module state (no vi.mock, process.env or chdir; each
        // metrics Registry is its own), so a worker keeps its modules from file to file.
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...exclude, ...nockUsers],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'nock', include: nockUsers, exclude, isolate: true } },
    ],
  },
});
