// Story: migrations that fail. KubeVirt retries a failed evacuation migration itself (with backoff);
// drainer reports it and waits, up to kubevirt.migrationTimeout per VMI. A passing API hiccup does
// not end the evacuation.
import { describe, expect, it, vi } from 'vitest';
import { byName, context, migrationsOf, nodeOf, vm, worldPerTest } from './harness.ts';

const world = worldPerTest();

describe('KubeVirt plugin, failing migrations', () => {
  it('reports a failed migration, lets KubeVirt retry it, and succeeds on the retry', async () => {
    const w = await world({ vmis: [vm('vm-a', { failFirstAttempts: 1 })] });
    const ctx = context();

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(true);
    expect(nodeOf(w, 'vm-a')).not.toBe('node-1');
    expect(
      migrationsOf(w, 'vm-a')
        .map((m) => (m.status as { phase: string }).phase)
        .sort(),
    ).toEqual(['Failed', 'Succeeded']);
    expect(byName(outcome)['vms/vm-a']).toMatchObject({ state: 'succeeded', attempts: 2 });
    const said = ctx.reports.flatMap((r) => r.map((x) => x.message ?? ''));
    expect(said.some((m) => /failed .*KubeVirt retries/.test(m))).toBe(true);
  });

  it('counts a VMI as failed after kubevirt.migrationTimeout, naming it', async () => {
    const w = await world({
      vmis: [vm('vm-slow', { migrationSeconds: 3600 }), vm('vm-quick')],
    });

    const outcome = await w.plugin({ migrationTimeout: 20 }).evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(false);
    expect(byName(outcome)['vms/vm-slow']).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/not migrated within 20s \(kubevirt\.migrationTimeout\)/),
    });
    expect(outcome.message).toMatch(/^vms\/vm-slow did not migrate/);
    expect(byName(outcome)['vms/vm-quick']?.state).toBe('succeeded');
    expect(nodeOf(w, 'vm-slow')).toBe('node-1');
  });

  it("names KubeVirt's reason for the last failed migration when the deadline ends the wait", async () => {
    // seen against KubeVirt v1.5.3's own control plane (test/real/08k-kubevirt): every attempt failed with the
    // node's reason, and the deadline's report said only "last migration … Failed"
    const w = await world({ vmis: [vm('vm-fail', { failFirstAttempts: 100, migrationSeconds: 1 })] });

    const outcome = await w.plugin({ migrationTimeout: 20 }).evacuate({ name: 'node-1' }, context());

    expect(byName(outcome)['vms/vm-fail']).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(
        /^not migrated within 20s \(kubevirt\.migrationTimeout\); last migration \S+ \w+.*failed \(injected failure \(attempt \d+ of the first 100\)\)$/,
      ),
    });
  });

  it('rides out a burst of 503s from the API server while following the migrations', async () => {
    // Migrations long enough (100 s at the 50x clock: 2 s) that the burst lands while drainer follows them,
    // however slowly this machine reaches that point.
    const w = await world({
      vmis: [vm('vm-a', { migrationSeconds: 100 }), vm('vm-b', { migrationSeconds: 100 })],
    });
    const plugin = w.plugin();
    const ctx = context();
    const running = plugin.evacuate({ name: 'node-1' }, ctx);
    await vi.waitFor(() => expect(migrationsOf(w, 'vm-a').length + migrationsOf(w, 'vm-b').length).toBe(2), {
      timeout: 10_000,
      interval: 5,
    });
    // the fault runs on the scenario clock: 20 s simulated is 0.4 s real, which the plugin's polls (every
    // 0.5 s simulated) and its watch re-opens cannot all miss, as they could a 1 s (20 ms real) burst
    w.sb.kube.faults.failRequests({ status: 503, forMs: 20_000, match: /kubevirt\.io/ });

    const outcome = await running;

    expect(outcome.succeeded).toBe(true);
    expect(w.sb.kube.requestLog.some((r) => r.status === 503)).toBe(true);
  });
});
