// Story: what drainer says while KubeVirt moves a node's VMIs, version by version. KubeVirt v1.9
// creates every evacuation migration at once and holds the extra ones Pending (its migration
// controller runs 2 per node); up to v1.8 its evacuation controller creates only as many as may
// run. Either way a VMI waiting its turn is queued, not migrating, and its clock has not started.
// The target shows from KubeVirt's handoff, read from the VMI's migrationState.
import { describe, expect, it } from 'vitest';
import type { WorkloadProgress } from '../../../src/core/backends/plugin.ts';
import { byName, context, migrationsOf, nodeOf, until, vm, worldPerTest } from './harness.ts';

const world = worldPerTest();

const six = ['vm-1', 'vm-2', 'vm-3', 'vm-4', 'vm-5', 'vm-6'];
const states = (r: readonly WorkloadProgress[]) => r.map((x) => x.state);
const count = (r: readonly WorkloadProgress[], state: string) => states(r).filter((s) => s === state).length;

describe('KubeVirt plugin reports, v1.9 and v1.8', () => {
  it('v1.9: a node with 6 migratable VMIs shows 2 migrating and 4 queued by KubeVirt, then all moved', async () => {
    const w = await world({ vmis: six.map((n) => vm(n, { migrationSeconds: 20 })) });
    const ctx = context();

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(true);
    for (const n of six) expect(nodeOf(w, n)).not.toBe('node-1');
    const twoAndFour = ctx.reports.find((r) => count(r, 'migrating') === 2 && count(r, 'pending') === 4);
    expect(twoAndFour).toBeDefined();
    for (const q of twoAndFour!.filter((x) => x.state === 'pending')) {
      expect(q.message).toMatch(
        /^queued by KubeVirt \(migration kubevirt-evacuation-\w+ Pending, \d of 4 waiting in the cluster\)$/,
      );
      expect(q.startedAt).toBeUndefined(); // its clock starts past Pending
    }
    // KubeVirt had a migration for every VMI at once
    expect(six.every((n) => migrationsOf(w, n).length === 1)).toBe(true);
  });

  it('v1.8: the same node shows 2 migrating and 4 waiting for KubeVirt to create their migration, then all moved', async () => {
    const w = await world({ version: 'v1.8', vmis: six.map((n) => vm(n, { migrationSeconds: 20 })) });
    const ctx = context();
    let mostMigrations = 0;
    const off = w.sb.kube.store.subscribe('virtualmachineinstancemigrations.kubevirt.io', () => {
      const open = w.sb.kube.store
        .list('virtualmachineinstancemigrations.kubevirt.io')
        .filter((m) => !['Succeeded', 'Failed'].includes((m.status as { phase?: string })?.phase ?? ''));
      mostMigrations = Math.max(mostMigrations, open.length);
    });

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);
    off();

    expect(outcome.succeeded).toBe(true);
    const twoAndFour = ctx.reports.find((r) => count(r, 'migrating') === 2 && count(r, 'pending') === 4);
    expect(twoAndFour?.filter((x) => x.state === 'pending').map((x) => x.message)).toEqual(
      Array(4).fill('waiting for KubeVirt to start a migration'),
    );
    expect(mostMigrations).toBe(2); // v1.8's evacuation controller throttles itself
  });

  it('shows the target node while the VMI migrates (from the VMI, before KubeVirt fills the VMIM)', async () => {
    const w = await world({ vmis: [vm('vm-a', { migrationSeconds: 30 })] });
    const ctx = context();
    const running = w.plugin().evacuate({ name: 'node-1' }, ctx);

    let vmimTarget: unknown = 'not looked';
    const during = await until('a migrating report with a target', () => {
      const found = ctx.reports.flat().find((x) => x.state === 'migrating' && x.target);
      if (found)
        vmimTarget = (migrationsOf(w, 'vm-a')[0]?.status as { migrationState?: { targetNode?: string } })
          ?.migrationState?.targetNode;
      return found;
    });
    const [m] = migrationsOf(w, 'vm-a');
    const outcome = await running;

    expect(['node-2', 'node-3']).toContain(during.target);
    expect(vmimTarget).toBeUndefined(); // KubeVirt copies the state to the VMIM only once final
    expect(during.message).toMatch(new RegExp(`^migration ${m!.metadata.name} \\w+ to ${during.target}$`));
    expect(byName(outcome)['vms/vm-a']).toMatchObject({ state: 'succeeded', target: during.target });
  });

  it("says why a failed migration failed: KubeVirt's reason after the handoff, else where to find it", async () => {
    const w = await world({ vmis: [vm('vm-a', { failFirstAttempts: 1 })] });
    const ctx = context();

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(true);
    const said = ctx.reports.flat().map((x) => x.message ?? '');
    expect(said).toContainEqual(
      expect.stringMatching(
        /^migration kubevirt-evacuation-\w+ failed \(injected failure \(attempt 1 of the first 1\)\); KubeVirt retries/,
      ),
    );
  });

  it('a failure before the handoff (no node has room for the target) says "reason in Events"; the retry succeeds once there is room', async () => {
    const w = await world({ vmis: [vm('vm-a')] }, 200);
    for (const n of ['node-2', 'node-3'])
      w.sb.kube.store.patch('nodes', undefined, n, 'application/merge-patch+json', {
        spec: { unschedulable: true },
      });
    const ctx = context();
    const running = w.plugin({ pollInterval: 2 }).evacuate({ name: 'node-1' }, ctx);

    const failed = await until(
      'the unschedulable target failed',
      () =>
        ctx.reports.flat().find((x) => /failed \(reason in Events\); KubeVirt retries/.test(x.message ?? '')),
      15_000,
    );
    w.sb.kube.store.patch('nodes', undefined, 'node-2', 'application/merge-patch+json', {
      spec: { unschedulable: false },
    });
    const outcome = await running;

    expect(failed.state).toBe('migrating');
    expect(outcome.succeeded).toBe(true);
    expect(nodeOf(w, 'vm-a')).toBe('node-2');
    const reasons = w.sb.kube.store
      .list('events', { namespace: 'vms' })
      .map((e) => `${e.reason as string}: ${e.message as string}`);
    expect(reasons).toContain(
      'MigrationTargetPodUnschedulable: Migration target pod for VMI [vms/vm-a] is currently unschedulable.',
    );
    expect(reasons).toContain('FailedMigration: Migration target pod was removed during active migration.');
  });
});

describe('KubeVirt plugin, the deadline follows the guest memory', () => {
  const big = { vmis: [vm('vm-big', { memory: '16Gi', migrationSeconds: 35 * 60 })] };

  it('a 16 GiB VMI migrating for 35 min is not called failed by default (150 s per GB × 18 GB + 600 s = 3300 s)', async () => {
    const w = await world(big, 2000);

    const outcome = await w.plugin({ pollInterval: 30 }).evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-big']).toMatchObject({ state: 'succeeded' });
    expect(byName(outcome)['vms/vm-big']?.durationMs).toBeGreaterThan(35 * 60_000);
  });

  it('a fixed kubevirt.migrationTimeout of 1800 s still calls it failed', async () => {
    const w = await world(big, 2000);

    const outcome = await w
      .plugin({ pollInterval: 30, migrationTimeout: 1800 })
      .evacuate({ name: 'node-1' }, context());

    expect(byName(outcome)['vms/vm-big']).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/^not migrated within 1800s \(kubevirt\.migrationTimeout\)/),
    });
  });
});
