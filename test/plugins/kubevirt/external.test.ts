// Story (issues 31, 35): VMIs with evictionStrategy External. KubeVirt only marks one when its
// launcher pod is evicted (status.evacuationNodeName) and leaves the move to "an outside controller"
// (its API names Cluster API's KubeVirt provider, which drains and deletes the VM). By default
// (kubevirt.external: mark) drainer leaves it to that controller and waits until it is off the node.
// Where no such controller runs, kubevirt.external: migrate makes drainer that controller: it evicts
// the launcher pod, waits for KubeVirt's mark to name the node, then creates the migration itself,
// and a new one after a failure (KubeVirt does not retry migrations it did not create).
import { describe, expect, it } from 'vitest';
import { byName, context, evictionPosts, migrationsOf, nodeOf, vm, VMI, worldPerTest } from './harness.ts';

const world = worldPerTest();

const external = (name: string, more = {}) => vm(name, { evictionStrategy: 'External', ...more });

describe("KubeVirt plugin, External VMIs are their own controller's by default", () => {
  it('drainer marks it, moves nothing of it, and waits until its controller has taken it off the node', async () => {
    const w = await world({ vmis: [external('vm-capk'), vm('vm-live')] });
    // Cluster API's KubeVirt provider, as it answers the mark: it drains its node and deletes the VMI
    const off = w.sb.kube.store.subscribe(VMI, (type, v) => {
      const marked = (v.status as { evacuationNodeName?: string } | undefined)?.evacuationNodeName;
      if (type === 'MODIFIED' && v.metadata.name === 'vm-capk' && marked && !v.metadata.deletionTimestamp)
        setTimeout(() => w.sb.kube.store.delete(VMI, 'vms', 'vm-capk'), 50);
    });

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, context());
    off();

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-capk']).toMatchObject({
      state: 'skipped',
      action: 'external',
      message: 'taken off the node by its own controller (the VMI was deleted)',
    });
    expect(migrationsOf(w, 'vm-capk')).toEqual([]); // drainer did not take it over
    expect(w.sb.kube.store.find(VMI, 'vms', 'vm-capk')).toBeUndefined();
  });

  it('a marked VMI its controller does not take off the node fails the evacuation, naming it', async () => {
    const w = await world({ vmis: [external('vm-capk')] });
    const ctx = { ...context(), deadline: new Date(Date.now() + 1500) };

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(false);
    expect(outcome.message).toMatch(
      /^vms\/vm-capk did not migrate \(evictionStrategy External \(kubevirt.external: mark\): marked for its own controller/,
    );
    expect(nodeOf(w, 'vm-capk')).toBe('node-1');
    expect(migrationsOf(w, 'vm-capk')).toEqual([]);
  });
});

describe('KubeVirt plugin, drainer as the controller of External VMIs (kubevirt.external: migrate)', () => {
  it('an External VMI is migrated by drainer once its evacuationNodeName names the node', async () => {
    const w = await world({ vmis: [external('vm-ext'), vm('vm-live')] });
    let markedBeforeCreate: string | undefined = 'no migration seen';
    const off = w.sb.kube.store.subscribe('virtualmachineinstancemigrations.kubevirt.io', (type, m) => {
      if (type !== 'ADDED' || (m.spec as { vmiName?: string }).vmiName !== 'vm-ext') return;
      markedBeforeCreate = (
        w.sb.kube.store.get('virtualmachineinstances.kubevirt.io', 'vms', 'vm-ext').status as {
          evacuationNodeName?: string;
        }
      ).evacuationNodeName;
    });

    const outcome = await w.plugin({ external: 'migrate' }).evacuate({ name: 'node-1' }, context());
    off();

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-ext']).toMatchObject({ state: 'succeeded', action: 'live-migrate' });
    expect(nodeOf(w, 'vm-ext')).not.toBe('node-1');
    expect(markedBeforeCreate).toBe('node-1');
    const [m] = migrationsOf(w, 'vm-ext');
    expect(m?.metadata.name).toMatch(/^drainer-evacuation-/);
    expect(m?.metadata.labels).toMatchObject({ 'drainer.dev/node': 'node-1' });
    expect(evictionPosts(w)).toHaveLength(1); // the mark; the LiveMigrate VMI moved by the taint
  });

  it('creates a new migration after a failed one, as KubeVirt would not', async () => {
    const w = await world({ vmis: [external('vm-ext', { failFirstAttempts: 1 })] }, 200);
    const ctx = context();

    const outcome = await w.plugin({ external: 'migrate' }).evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(true);
    expect(
      migrationsOf(w, 'vm-ext')
        .map((m) => (m.status as { phase?: string }).phase)
        .sort(),
    ).toEqual(['Failed', 'Succeeded']);
    expect(ctx.reports.flat().map((x) => x.message)).toContainEqual(
      expect.stringMatching(/failed \(injected failure .*\); drainer retries \(evictionStrategy External\)/),
    );
  });

  it('an External VMI that cannot live-migrate is a blocker, like a LiveMigrate one', async () => {
    const w = await world({ vmis: [external('vm-ext', { migratable: false })] });

    const plan = await w
      .plugin({ external: 'migrate' })
      .plan({ name: 'node-1' }, new AbortController().signal);

    expect(plan.workloads).toEqual([
      expect.objectContaining({ name: 'vms/vm-ext', action: 'none', blocker: 'DisksNotLiveMigratable' }),
    ]);
  });
});
