// Story (issue 31): each VM its own way out. The annotation drainer.dev/maintenance on a VMI, or on
// the VirtualMachine that owns it: `stop` is stopped on the host and started again on restore,
// `notify` gives its owner kubevirt.notifyTimeout to move it before drainer has it migrated, and an
// invalid value is a blocker the plan names (so the evacuation is refused before the first change).
// With such VMIs on the node drainer evicts launcher pods one by one: the drain taint would move all.
import { describe, expect, it } from 'vitest';
import { ANN } from '../../../src/sandbox/controllers/kubevirt/vmi.ts';
import {
  byName,
  context,
  evictionPosts,
  migrationsOf,
  nodeOf,
  NS,
  phaseOf,
  restoreCtx,
  taints,
  until,
  vm,
  VMI,
  worldPerTest,
  type World,
} from './harness.ts';

const world = worldPerTest();

const VM = 'virtualmachines.kubevirt.io';
const KEY = 'drainer.dev/maintenance';

/** A VirtualMachine whose VMI runs on node-1, with the annotation on the VM. */
async function virtualMachine(w: World, name: string, maintenance: string) {
  const template = {
    metadata: { labels: { 'vm.kubevirt.io/name': name } },
    spec: { evictionStrategy: 'LiveMigrate', domain: { resources: { requests: { memory: '1Gi' } } } },
  };
  const created = w.sb.kube.store.create(VM, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS, annotations: { [KEY]: maintenance } },
    spec: { runStrategy: 'Always', template },
  });
  w.sb.kube.store.create(VMI, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      ...template.metadata,
      name,
      namespace: NS,
      annotations: { [ANN.node]: 'node-1' },
      ownerReferences: [
        {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachine',
          name,
          uid: created.metadata.uid!,
          controller: true,
        },
      ],
    },
    spec: template.spec,
  });
  await until(`${name} running`, () => phaseOf(w, name) === 'Running');
}

const annotate = (w: World, name: string, value: string) =>
  w.sb.kube.store.patch(VMI, NS, name, 'application/merge-patch+json', {
    metadata: { annotations: { [KEY]: value } },
  });

describe('KubeVirt plugin, drainer.dev/maintenance', () => {
  it('stop (on the VirtualMachine): stopped on the host, recorded first; the others move; restore starts it again', async () => {
    const w = await world({ vmis: [vm('vm-live')] });
    await virtualMachine(w, 'vm-halt', 'stop');
    const ctx = context();

    const outcome = await w.plugin().evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-halt']).toMatchObject({
      state: 'skipped',
      action: 'shutdown',
      message: 'stopped (drainer.dev/maintenance: stop); VirtualMachine vm-halt is started again on restore',
    });
    expect(w.sb.kube.store.find(VMI, NS, 'vm-halt')).toBeUndefined();
    expect((w.sb.kube.store.get(VM, NS, 'vm-halt').spec as { runStrategy: string }).runStrategy).toBe(
      'Halted',
    );
    expect(ctx.saved()).toEqual({
      stopped: [
        {
          namespace: NS,
          name: 'vm-halt',
          runStrategy: 'Always',
          vmi: expect.any(String),
        },
      ],
    });
    expect(nodeOf(w, 'vm-live')).not.toBe('node-1');
    expect(taints(w)).toEqual([]); // evicted one by one instead
    expect(evictionPosts(w)).toHaveLength(1);

    await w.plugin().restore({ name: 'node-1' }, restoreCtx(ctx));

    await until('vm-halt runs again', () => phaseOf(w, 'vm-halt') === 'Running');
    expect(ctx.saved()).toEqual({});
  });

  it('notify: its owner has kubevirt.notifyTimeout to move it; then drainer has it migrated, the others at once', async () => {
    const w = await world({ vmis: [vm('vm-owned', { migrationSeconds: 4 }), vm('vm-live')] });
    annotate(w, 'vm-owned', 'notify');
    const ctx = context();
    const started = w.sb.clock.now();

    const outcome = await w.plugin({ notifyTimeout: 120 }).evacuate({ name: 'node-1' }, ctx);

    expect(outcome.succeeded).toBe(true);
    expect(nodeOf(w, 'vm-owned')).not.toBe('node-1');
    const [m] = migrationsOf(w, 'vm-owned');
    const [other] = migrationsOf(w, 'vm-live');
    // objects carry real time: the store keeps each creation's moment on the scenario clock
    const at = (o: typeof m) => w.sb.kube.store.stamps.metaMoment(o!, 'creationTimestamp');
    expect(at(m) - started).toBeGreaterThanOrEqual(119_000);
    expect(at(other) - started).toBeLessThan(60_000);
    expect(ctx.reports.flat().map((x) => x.message)).toContainEqual(
      expect.stringMatching(/^drainer\.dev\/maintenance: notify: its owner may move it/),
    );
  });

  it('an invalid value is a blocker naming the key, the object and the values allowed', async () => {
    const w = await world({ vmis: [vm('vm-a')] });
    annotate(w, 'vm-a', 'cold');

    const plan = await w.plugin().plan({ name: 'node-1' }, new AbortController().signal);

    expect(plan.workloads).toEqual([
      expect.objectContaining({
        name: 'vms/vm-a',
        action: 'none',
        blocker:
          'VirtualMachineInstance vms/vm-a: drainer.dev/maintenance="cold" is not one of live, stop, notify',
      }),
    ]);
  });
});
