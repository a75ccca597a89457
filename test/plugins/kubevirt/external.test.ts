// Story (issue 31): VMIs with evictionStrategy External. KubeVirt only marks one when its launcher
// pod is evicted (status.evacuationNodeName) and leaves the move to "an outside controller": by
// default drainer is that controller. It evicts the launcher pod, waits for KubeVirt's mark to name
// the node, then creates the migration itself, and a new one after a failure (KubeVirt does not
// retry migrations it did not create for an evacuation).
import { describe, expect, it } from 'vitest';
import { byName, context, evictionPosts, migrationsOf, nodeOf, vm, worldPerTest } from './harness.ts';

const world = worldPerTest();

const external = (name: string, more = {}) => vm(name, { evictionStrategy: 'External', ...more });

describe('KubeVirt plugin, drainer as the controller of External VMIs', () => {
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

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, context());
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

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);

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

    const plan = await w.plugin().plan({ name: 'node-1' }, new AbortController().signal);

    expect(plan.workloads).toEqual([
      expect.objectContaining({ name: 'vms/vm-ext', action: 'none', blocker: 'DisksNotLiveMigratable' }),
    ]);
  });
});
