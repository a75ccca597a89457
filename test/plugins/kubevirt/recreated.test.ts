// Story (issue 48): an owner restarts its VirtualMachine in the middle of an evacuation (or Cluster
// API's KubeVirt provider deletes the VMI), and the VM makes a new VMI under the same name. drainer
// knows a VMI by its uid: the new one elsewhere means the node lost that workload (the evacuation
// goes on, nothing failed); the new one on the node is a new workload, evicted and moved like any.
import { describe, expect, it } from 'vitest';
import { ANN } from '../../../src/sandbox/controllers/kubevirt/vmi.ts';
import {
  byName,
  context,
  evictionPosts,
  migrationsOf,
  moveByHand,
  nodeOf,
  NS,
  until,
  vm,
  VMI,
  worldPerTest,
  type World,
} from './harness.ts';

const world = worldPerTest();
const VM = 'virtualmachines.kubevirt.io';

/** A VirtualMachine (runStrategy Always) whose VMI runs on node-1 and migrates in `seconds`. */
async function virtualMachine(w: World, name: string, seconds: number, annotations = {}) {
  if (!w.sb.kube.store.find('namespaces', undefined, NS))
    w.sb.kube.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  w.sb.kube.store.create(VM, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS, annotations },
    spec: {
      runStrategy: 'Always',
      template: {
        metadata: {
          labels: { 'vm.kubevirt.io/name': name },
          annotations: { [ANN.node]: 'node-1', [ANN.migrationSeconds]: String(seconds) },
        },
        spec: {
          evictionStrategy: 'LiveMigrate',
          terminationGracePeriodSeconds: 1,
          domain: { resources: { requests: { memory: '1Gi' } } },
        },
      },
    },
  });
  return uidOf(await until(`${name} running`, () => running(w, name)));
}

const running = (w: World, name: string) => {
  const v = w.sb.kube.store.find(VMI, NS, name);
  const s = v?.status as { phase?: string } | undefined;
  return s?.phase === 'Running' && !v?.metadata.deletionTimestamp ? v : undefined;
};
const uidOf = (v: { metadata: { uid?: string } }) => v.metadata.uid ?? '';

/** The owner restarts the VM: the VMI is deleted and the VM makes a new one, on `node`. */
async function restartOnto(w: World, name: string, node: string): Promise<string> {
  const old = uidOf(w.sb.kube.store.get(VMI, NS, name));
  w.sb.kube.store.patch(VM, NS, name, 'application/merge-patch+json', {
    spec: { template: { metadata: { annotations: { [ANN.node]: node } } } },
  });
  w.sb.kube.store.delete(VMI, NS, name);
  const next = await until(`${name} created again`, () => {
    const v = running(w, name);
    return v && uidOf(v) !== old ? v : undefined;
  });
  return uidOf(next);
}

const migrating = (w: World, name: string) =>
  migrationsOf(w, name).some((m) => (m.status as { phase?: string } | undefined)?.phase === 'Running');

describe('KubeVirt plugin, a VMI created again under its name mid-evacuation', () => {
  it('its new VMI runs on another node: the node lost it, the evacuation succeeds', async () => {
    const w = await world({ vmis: [vm('vm-other')] });
    await virtualMachine(w, 'vm-a', 3600);
    const running = w.plugin().evacuate({ name: 'node-1' }, context());
    await until('vm-a migrating', () => migrating(w, 'vm-a'));

    const now = await restartOnto(w, 'vm-a', 'node-2');
    const outcome = await running;

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-a']).toMatchObject({
      state: 'skipped',
      message: expect.stringMatching(`created again under its name \\(uid ${now}\\) on node node-2`),
    });
    expect(byName(outcome)['vms/vm-other']?.state).toBe('succeeded');
  });

  it('its new VMI runs on the node: drainer evicts the new launcher, and it moves', async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-a', 3600);
    const running = w.plugin({ trigger: 'eviction' }).evacuate({ name: 'node-1' }, context());
    await until('vm-a migrating', () => migrating(w, 'vm-a'));
    // the new VMI migrates quickly
    w.sb.kube.store.patch(VM, NS, 'vm-a', 'application/merge-patch+json', {
      spec: { template: { metadata: { annotations: { [ANN.migrationSeconds]: '4' } } } },
    });

    const now = await restartOnto(w, 'vm-a', 'node-1');
    const outcome = await running;

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-a']).toMatchObject({ id: now, state: 'succeeded' });
    expect(nodeOf(w, 'vm-a')).not.toBe('node-1');
    expect(uidOf(w.sb.kube.store.get(VMI, NS, 'vm-a'))).toBe(now);
  });

  it('notify: its owner restarts it onto another node while asked; nothing is evicted and nothing failed', async () => {
    const w = await world({});
    await virtualMachine(w, 'vm-a', 4, { 'drainer.dev/maintenance': 'notify' });
    const ctx = context();
    const running = w.plugin({ notifyTimeout: 60 }).evacuate({ name: 'node-1' }, ctx);
    await until('its owner asked', () => ctx.saved()?.asked);

    const now = await restartOnto(w, 'vm-a', 'node-2');
    const outcome = await running;

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-a']).toMatchObject({ state: 'skipped' });
    expect(evictionPosts(w)).toEqual([]);
    expect(nodeOf(w, 'vm-a')).toBe('node-2');
    expect(uidOf(w.sb.kube.store.get(VMI, NS, 'vm-a'))).toBe(now);
  });

  it('manual: a VMI its owner created again on the node is followed as a new one until it too has left', async () => {
    // vm-stay keeps the node from looking empty while vm-a's owner restarts it
    const w = await world({ vmis: [vm('vm-stay')] });
    const first = await virtualMachine(w, 'vm-a', 4);
    const ctx = context();
    const evacuation = w.plugin().evacuate({ name: 'node-1', mode: 'manual' }, ctx);
    await until('the wait is reported', () => ctx.reports.length > 0);

    const second = await restartOnto(w, 'vm-a', 'node-1');
    await until('both of vm-a reported', () => ctx.reports.some((r) => r.length === 3));
    await restartOnto(w, 'vm-a', 'node-2');
    moveByHand(w, 'vm-stay');
    const outcome = await evacuation;

    expect(outcome.succeeded).toBe(true);
    const stay = uidOf(w.sb.kube.store.get(VMI, NS, 'vm-stay'));
    expect(outcome.workloads.map((x) => [x.id, x.name, x.state])).toEqual(
      expect.arrayContaining([
        [first, 'vms/vm-a', 'succeeded'],
        [second, 'vms/vm-a', 'succeeded'],
        [stay, 'vms/vm-stay', 'succeeded'],
      ]),
    );
    expect(outcome.workloads).toHaveLength(3);
  });
});
