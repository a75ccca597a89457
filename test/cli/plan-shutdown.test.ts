// Story: an operator runs `drainer plan` on a node (or in its agent's pod). Beside what would move, one
// line says whether logind's time covers this node's evacuation if the host rebooted now, reading
// InhibitDelayMaxUSec on the host's system bus, and which setting to raise; without a bus it says so.
import { afterEach, describe, expect, it } from 'vitest';
import type { BackendPlugin, Plan } from '../../src/core/backends/plugin.ts';
import { startFakeLogind, type FakeLogind } from '../logind/fake-logind.ts';
import { cli } from './harness.ts';

const GiB = 1024 ** 3;
const plan: Plan = {
  plugin: 'nova',
  location: 'compute-1',
  workloads: ['web-1', 'web-2'].map((name) => ({
    id: name,
    name,
    owner: 'project-a',
    state: 'ACTIVE',
    action: 'live-migrate' as const,
    memoryBytes: 16 * GiB,
  })),
};
const nova: BackendPlugin = {
  name: 'nova',
  plan: async () => plan,
  evacuate: () => Promise.reject(new Error('not asked')),
  restore: async () => undefined,
};

let bus: FakeLogind | undefined;
afterEach(async () => {
  await bus?.close();
  bus = undefined;
});

const planWith = (busSocket: string) =>
  cli({ plugins: [nova], files: { 'config.yaml': `shutdown:\n  busSocket: ${busSocket}\n` } })(
    'plan',
    '--node',
    'node-1',
  );

describe('drainer plan: the shutdown check', () => {
  it("warns when logind's time is shorter than the evacuation, naming what to raise", async () => {
    bus = await startFakeLogind({ inhibitDelayMaxUSec: 30_000_000n });
    const { stdout } = await planWith(bus.socketPath);
    expect(stdout).toMatch(
      /^warning: shutdown: logind gives 30s \(InhibitDelayMaxUSec\), this node's evacuation needs about 47s .*raise the kubelet's shutdownGracePeriod .* to 47s or more$/m,
    );
  });

  it('says the time covers it when it does', async () => {
    bus = await startFakeLogind({ inhibitDelayMaxUSec: 600_000_000n });
    const { stdout } = await planWith(bus.socketPath);
    expect(stdout).toMatch(
      /^note: shutdown: logind gives 10m .*: an unplanned reboot now is evacuated in time$/m,
    );
  });

  it('says logind is unknown where there is no system bus', async () => {
    const { stdout } = await planWith('/nonexistent/system_bus_socket');
    expect(stdout).toMatch(
      /^note: shutdown: logind's InhibitDelayMaxUSec unknown \(no system bus at \/nonexistent\/system_bus_socket\)/m,
    );
  });
});
