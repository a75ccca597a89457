// Story: the modern trigger. drainer evicts each virt-launcher pod; KubeVirt's webhook answers 429
// "Eviction triggered evacuation" and migrates the VMI. With `both`, the taint goes first and an
// eviction follows only for VMIs KubeVirt has not started to migrate after triggerGraceSeconds.
import { describe, expect, it } from 'vitest';
import {
  byName,
  context,
  evictionPosts,
  launcherOf,
  migrationsOf,
  nodeOf,
  taints,
  vm,
  worldPerTest,
  type World,
} from './harness.ts';

const world = worldPerTest();

const evictionAnswers = (w: World) =>
  w.sb.kube.requestLog
    .filter((r) => r.method === 'POST' && r.path.endsWith('/eviction'))
    .map((r) => r.status);

describe('KubeVirt plugin, eviction trigger', () => {
  it('evicts each launcher pod once; the 429 "Eviction triggered evacuation" counts as started', async () => {
    const w = await world({ vmis: [vm('vm-a'), vm('vm-b'), vm('vm-none', { evictionStrategy: 'None' })] });
    const pods = { a: launcherOf(w, 'vm-a')?.metadata.name, b: launcherOf(w, 'vm-b')?.metadata.name };

    const outcome = await w.plugin({ trigger: 'eviction' }).evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(true);
    expect(evictionPosts(w).sort()).toEqual([
      `/api/v1/namespaces/vms/pods/${pods.a}/eviction`,
      `/api/v1/namespaces/vms/pods/${pods.b}/eviction`,
    ]);
    expect(evictionAnswers(w)).toEqual([429, 429]);
    expect(nodeOf(w, 'vm-a')).not.toBe('node-1');
    expect(nodeOf(w, 'vm-b')).not.toBe('node-1');
    expect(byName(outcome)['vms/vm-a']).toMatchObject({ state: 'succeeded', attempts: 1 });
    // no taint with this trigger; the VMI with strategy None is left to the pod drain
    expect(taints(w)).toEqual([]);
    expect(nodeOf(w, 'vm-none')).toBe('node-1');
    expect(byName(outcome)['vms/vm-none']).toMatchObject({ state: 'skipped', action: 'shutdown' });
  });
});

describe('KubeVirt plugin, trigger both', () => {
  // KubeVirt runs one outbound migration at a time here, so the others wait in its queue
  const queued = {
    parallelOutboundMigrationsPerNode: 1,
    migrationSeconds: 12,
    vmis: [vm('vm-a'), vm('vm-b'), vm('vm-c')],
  };

  it('taints first and evicts nothing while KubeVirt starts every migration within the grace time', async () => {
    const w = await world(queued);

    const outcome = await w
      .plugin({ trigger: 'both', triggerGraceSeconds: 600 })
      .evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(true);
    expect(taints(w)).toContainEqual(expect.objectContaining({ key: 'kubevirt.io/drain' }));
    expect(evictionPosts(w)).toEqual([]);
  });

  it('on KubeVirt v1.9 every VMI has a migration at once (queued Pending), so nothing is evicted after the grace time', async () => {
    const w = await world(queued);

    const outcome = await w
      .plugin({ trigger: 'both', triggerGraceSeconds: 1 })
      .evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(true);
    expect(evictionPosts(w)).toEqual([]);
    for (const name of ['vm-a', 'vm-b', 'vm-c']) expect(nodeOf(w, name)).not.toBe('node-1');
  });

  it('up to KubeVirt v1.8 (its evacuation controller throttles): after the grace time, evicts the launcher pods of the VMIs that have no migration yet', async () => {
    const w = await world({ ...queued, version: 'v1.8' });
    const startedBeforeEviction = new Set<string>();
    const evicted: string[] = [];
    w.sb.kube.evictionHooks.unshift((pod) => {
      if (evicted.length === 0)
        for (const name of ['vm-a', 'vm-b', 'vm-c'])
          if (migrationsOf(w, name).length > 0) startedBeforeEviction.add(name);
      evicted.push(pod.metadata.labels?.['vm.kubevirt.io/name'] ?? '');
      return undefined; // KubeVirt's own hook answers
    });

    const outcome = await w
      .plugin({ trigger: 'both', triggerGraceSeconds: 1 })
      .evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(true);
    // KubeVirt had started one migration; the other two VMIs were evicted, once each
    expect(startedBeforeEviction.size).toBe(1);
    expect(evicted.sort()).toEqual(['vm-a', 'vm-b', 'vm-c'].filter((n) => !startedBeforeEviction.has(n)));
    expect(evictionAnswers(w)).toEqual([429, 429]);
    for (const name of ['vm-a', 'vm-b', 'vm-c']) expect(nodeOf(w, name)).not.toBe('node-1');
  });
});
