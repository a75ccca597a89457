// Story: while node-1 is emptied, another node's VMI migrates onto it (its target pod was scheduled
// there before the node was tainted). The evacuation does not end with the node called empty: the
// outcome fails naming the VMI, so the drain gate stays held, and the next attempt moves it.
import { describe, expect, it } from 'vitest';
import { NS, VMIM, context, nodeOf, until, vm, worldPerTest, type World } from './harness.ts';

const world = worldPerTest();

const cordon = (w: World, node: string, on: boolean) =>
  w.sb.kube.store.patch('nodes', undefined, node, 'application/merge-patch+json', {
    spec: { unschedulable: on },
  });

const migrate = (w: World, name: string) =>
  w.sb.kube.store.create(VMIM, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: { name: `rebalance-${name}`, namespace: NS },
    spec: { vmiName: name },
  });

const targetPodOn = (w: World, node: string) =>
  w.sb.kube.store
    .list('pods', { labelSelector: 'kubevirt.io=virt-launcher' })
    .find(
      (p) =>
        (p.spec as { nodeName?: string } | undefined)?.nodeName === node &&
        p.metadata.labels?.['kubevirt.io/migrationJobUID'],
    );

describe('KubeVirt plugin, a VMI that lands on the node while it is emptied', () => {
  it('fails the evacuation, naming it, while its migration onto the node runs; the next attempt moves it', async () => {
    const w = await world({
      vmis: [vm('vm-a'), vm('inbound', { node: 'node-2', migrationSeconds: 150 })],
    });
    // node-3 full: the scheduler can put the inbound VMI's target only on node-1
    cordon(w, 'node-3', true);
    migrate(w, 'inbound');
    await until('the target pod on node-1', () => targetPodOn(w, 'node-1'));
    cordon(w, 'node-3', false);

    const first = await w.plugin().evacuate({ name: 'node-1' }, context());

    expect(nodeOf(w, 'vm-a')).not.toBe('node-1');
    expect(first.succeeded).toBe(false);
    expect(first.message).toMatch(
      /a VMI is migrating onto node node-1 \(its target pod vms\/virt-launcher-inbound-/,
    );

    await until(
      'the inbound VMI landed on node-1',
      () => nodeOf(w, 'inbound') === 'node-1' || undefined,
      30_000,
    );
    const second = await w.plugin().evacuate({ name: 'node-1' }, context());

    expect(second.succeeded).toBe(true);
    expect(nodeOf(w, 'inbound')).not.toBe('node-1');
  });
});
