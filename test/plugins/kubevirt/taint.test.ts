// Story: the drain taint, its key read from the KubeVirt CR, makes KubeVirt live-migrate the VMIs;
// drainer follows them to the end and takes back only a taint it added itself.
import { describe, expect, it } from 'vitest';
import {
  addForeignTaint,
  byName,
  context,
  evictionPosts,
  launcherOf,
  migrationsOf,
  nodeOf,
  restoreCtx,
  taints,
  vm,
  worldPerTest,
} from './harness.ts';

const world = worldPerTest();

const KEY = 'example.org/evacuate';

describe('KubeVirt plugin, taint trigger', () => {
  it('taints the node with the key from the KubeVirt CR and waits until every LiveMigrate VMI moved', async () => {
    const w = await world({ nodeDrainTaintKey: KEY, vmis: [vm('vm-a'), vm('vm-b'), vm('vm-c')] });
    const ctx = context();

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(true);
    for (const name of ['vm-a', 'vm-b', 'vm-c']) {
      expect(nodeOf(w, name)).not.toBe('node-1');
      expect(byName(outcome)[`vms/${name}`]).toMatchObject({
        state: 'succeeded',
        action: 'live-migrate',
        source: 'node-1',
        target: nodeOf(w, name),
        attempts: 1,
      });
      expect(migrationsOf(w, name)[0]?.metadata.annotations).toMatchObject({
        'kubevirt.io/evacuationMigration': 'node-1',
      });
    }
    expect(taints(w)).toContainEqual(expect.objectContaining({ key: KEY, effect: 'NoSchedule' }));
    expect(taints(w).some((t) => t.key === 'kubevirt.io/drain')).toBe(false);
    expect(ctx.saved()).toEqual({ taint: { key: KEY, effect: 'NoSchedule' } });
    expect(evictionPosts(w)).toEqual([]); // the taint alone did it
    expect(ctx.reports.some((r) => r.some((x) => x.state === 'migrating'))).toBe(true);
  });

  it('restore removes the drain taint it added', async () => {
    const w = await world({ nodeDrainTaintKey: KEY, vmis: [vm('vm-a')] });
    const plugin = w.plugin();
    const ctx = context();
    await plugin.evacuate({ name: 'node-1' }, ctx);

    await plugin.restore({ name: 'node-1' }, restoreCtx(ctx));

    expect(taints(w).some((t) => t.key === KEY)).toBe(false);
    expect(ctx.saved()).toEqual({});
  });

  it('never claims a drain taint that was already there, so restore leaves it', async () => {
    const w = await world({ nodeDrainTaintKey: KEY, vmis: [vm('vm-a')] });
    addForeignTaint(w, KEY);
    const plugin = w.plugin();
    const ctx = context();

    const outcome = await plugin.evacuate({ name: 'node-1' }, ctx);
    await plugin.restore({ name: 'node-1' }, restoreCtx(ctx));

    expect(outcome.succeeded).toBe(true);
    expect(nodeOf(w, 'vm-a')).not.toBe('node-1');
    expect(ctx.saved()?.taint).toBeUndefined();
    expect(taints(w)).toContainEqual(expect.objectContaining({ key: KEY, value: 'theirs' }));
  });

  it('hands the launcher and hotplug-disk pods of a VMI it moves to itself, not those the pod drain stops', async () => {
    // vm-slow is still migrating when its time is up, so its pods are still on the node
    const w = await world({
      vmis: [vm('vm-slow', { migrationSeconds: 3600 }), vm('vm-none', { evictionStrategy: 'None' })],
    });
    const launcher = launcherOf(w, 'vm-slow')!;
    const hotplug = w.sb.kube.store.create('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'hp-volume-slow',
        namespace: 'vms',
        labels: { 'kubevirt.io': 'hotplug-disk' },
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Pod',
            name: launcher.metadata.name ?? '',
            uid: launcher.metadata.uid ?? '',
            controller: true,
          },
        ],
      },
      spec: { nodeName: 'node-1', containers: [{ name: 'hotplug-disk', image: 'busybox' }] },
    });
    const other = launcherOf(w, 'vm-none')!;

    const outcome = await w.plugin({ migrationTimeout: 10 }).evacuate({ name: 'node-1' }, context());

    expect(outcome.handledPods).toEqual(
      expect.arrayContaining([
        { namespace: 'vms', name: launcher.metadata.name },
        { namespace: 'vms', name: hotplug.metadata.name },
      ]),
    );
    expect(outcome.handledPods).not.toContainEqual({ namespace: 'vms', name: other.metadata.name });
  });

  it('dry run: reports what would move and changes nothing', async () => {
    const w = await world({ vmis: [vm('vm-a')] });
    const ctx = context({ dryRun: true });

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-a']).toMatchObject({ action: 'live-migrate', state: 'skipped' });
    expect(taints(w)).toEqual([]);
    expect(ctx.saved()).toBeUndefined();
    expect(w.sb.kube.requestLog.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
