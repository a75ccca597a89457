// Story: a node with a VMI of every eviction strategy, migratable or not. What moves, what the pod
// drain stops, and what kubevirt.nonMigratable does with a LiveMigrate VMI that cannot migrate.
import { describe, expect, it } from 'vitest';
import {
  byName,
  context,
  evictionPosts,
  launcherOf,
  nodeOf,
  phaseOf,
  vm,
  worldPerTest,
  type World,
} from './harness.ts';

const world = worldPerTest();

const stuck = { migratable: false, notMigratableReason: 'DisksNotLiveMigratable' } as const;
const everyKind = {
  evictionStrategy: 'LiveMigrate' as const, // the cluster default, for vm-default
  vmis: [
    vm('vm-live'),
    vm('vm-default', { evictionStrategy: undefined }),
    vm('vm-ifp', { evictionStrategy: 'LiveMigrateIfPossible' }),
    vm('vm-ifp-stuck', { evictionStrategy: 'LiveMigrateIfPossible', ...stuck }),
    vm('vm-none', { evictionStrategy: 'None' }),
    vm('vm-ext', { evictionStrategy: 'External' }),
    vm('vm-stuck', stuck),
  ],
};
const MOVERS = ['vm-live', 'vm-default', 'vm-ifp', 'vm-ext'];
const podOf = (w: World, name: string) => ({ namespace: 'vms', name: launcherOf(w, name)?.metadata.name });

describe('KubeVirt plugin, eviction strategies', () => {
  it('plans each VMI by its effective strategy and names the blocker', async () => {
    const w = await world(everyKind);

    const plan = await w
      .plugin({ external: 'migrate' })
      .plan({ name: 'node-1' }, new AbortController().signal);

    const actions = Object.fromEntries(plan.workloads.map((x) => [x.name, [x.action, x.blocker]]));
    expect(actions).toEqual({
      'vms/vm-live': ['live-migrate', undefined],
      'vms/vm-default': ['live-migrate', undefined],
      'vms/vm-ifp': ['live-migrate', undefined],
      'vms/vm-ifp-stuck': ['shutdown', undefined],
      'vms/vm-none': ['shutdown', undefined],
      'vms/vm-ext': ['live-migrate', undefined],
      'vms/vm-stuck': ['none', 'DisksNotLiveMigratable'],
    });
    expect(w.sb.kube.store.list('virtualmachineinstancemigrations.kubevirt.io')).toEqual([]); // no side effects
  });

  it('nonMigratable block: fails naming the VMI and its reason, still moves the others, evicts nothing of theirs', async () => {
    const w = await world(everyKind);
    const pods = { stuck: podOf(w, 'vm-stuck'), ext: podOf(w, 'vm-ext'), none: podOf(w, 'vm-none') };

    const outcome = await w
      .plugin({ nonMigratable: 'block', external: 'migrate' })
      .evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(false);
    expect(outcome.message).toBe('vms/vm-stuck cannot migrate (DisksNotLiveMigratable)');
    expect(byName(outcome)['vms/vm-stuck']).toMatchObject({ state: 'blocked', action: 'none' });
    for (const name of MOVERS) {
      expect(nodeOf(w, name)).not.toBe('node-1');
      expect(byName(outcome)[`vms/${name}`]?.state).toBe('succeeded');
    }
    // what cannot or need not migrate is still running where it was
    for (const name of ['vm-stuck', 'vm-none', 'vm-ifp-stuck']) {
      expect(nodeOf(w, name)).toBe('node-1');
      expect(phaseOf(w, name)).toBe('Running');
    }
    expect(byName(outcome)['vms/vm-none']).toMatchObject({ state: 'skipped', action: 'shutdown' });
    expect(byName(outcome)['vms/vm-ifp-stuck']?.message).toMatch(/DisksNotLiveMigratable/);
    // the pod drain leaves the blocked launcher alone (and the movers' while they remain), and stops vm-none's
    expect(outcome.handledPods).toContainEqual(pods.stuck);
    expect(outcome.handledPods).not.toContainEqual(pods.none);
    // the only eviction asked for marks the External VMI (drainer then migrates it); nothing was deleted
    expect(evictionPosts(w)).toEqual([`/api/v1/namespaces/vms/pods/${pods.ext.name}/eviction`]);
    expect(w.sb.kube.requestLog.filter((r) => r.method === 'DELETE')).toEqual([]);
  });

  it('external: mark: marks an External VMI for its own controller with an eviction, and moves nothing of it', async () => {
    const w = await world({ vmis: [vm('vm-ext', { evictionStrategy: 'External' })] });
    const ctx = { ...context(), deadline: new Date(Date.now() + 1000) };

    const outcome = await w.plugin({ external: 'mark' }).evacuate({ name: 'node-1' }, ctx);

    // nobody took it off the node within the deadline: it stays, marked, and the outcome says so
    expect(outcome.succeeded).toBe(false);
    expect(byName(outcome)['vms/vm-ext']).toMatchObject({ state: 'failed', action: 'external' });
    expect(w.sb.kube.store.get('virtualmachineinstances.kubevirt.io', 'vms', 'vm-ext').status).toMatchObject({
      evacuationNodeName: 'node-1',
    });
    expect(nodeOf(w, 'vm-ext')).toBe('node-1');
    expect(w.sb.kube.store.list('virtualmachineinstancemigrations.kubevirt.io')).toEqual([]);
  });

  it('nonMigratable shutdown: deletes the launcher pod KubeVirt would never let the drain evict', async () => {
    const w = await world(everyKind);
    const stuckPod = podOf(w, 'vm-stuck');

    const outcome = await w
      .plugin({ nonMigratable: 'shutdown', external: 'migrate' })
      .evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(true);
    expect(phaseOf(w, 'vm-stuck')).toBe('Succeeded');
    expect(launcherOf(w, 'vm-stuck')).toBeUndefined();
    expect(byName(outcome)['vms/vm-stuck']).toMatchObject({
      state: 'skipped',
      action: 'shutdown',
      message: 'stopped (nonMigratable: shutdown): DisksNotLiveMigratable',
    });
    expect(w.sb.kube.requestLog).toContainEqual(
      expect.objectContaining({ method: 'DELETE', path: `/api/v1/namespaces/vms/pods/${stuckPod.name}` }),
    );
    for (const name of MOVERS) expect(nodeOf(w, name)).not.toBe('node-1');
    // the VMIs the pod drain stops are still untouched
    expect(phaseOf(w, 'vm-none')).toBe('Running');
  });

  it('nonMigratable skip: leaves the VMI running and its launcher pod out of the drain', async () => {
    const w = await world(everyKind);
    const stuckPod = podOf(w, 'vm-stuck');

    const outcome = await w
      .plugin({ nonMigratable: 'skip', external: 'migrate' })
      .evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-stuck']).toMatchObject({ state: 'skipped', action: 'skip' });
    expect(phaseOf(w, 'vm-stuck')).toBe('Running');
    expect(nodeOf(w, 'vm-stuck')).toBe('node-1');
    expect(outcome.handledPods).toContainEqual(stuckPod);
  });
});
