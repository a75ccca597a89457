import { defineConfig } from 'vitest/config';

// A real systemd-logind in namespaces the suite makes (test/shutdown/host.ts; README "When the host reboots
// by itself"). Root and debootstrap; the Debian tree is cached in /var/cache/drainer-logind.
export default defineConfig({
  test: {
    include: ['test/shutdown/**/*.test.ts'],
    globalSetup: ['test/shutdown/announce.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
