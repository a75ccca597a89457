// Story (full stack, issue 35): an operator cordons node-a, where a VirtualMachine with
// runStrategy Once asks to be stopped for maintenance (drainer.dev/maintenance: stop), and changes
// their mind while KubeVirt is still stopping it: the VMI stays Running through its termination
// grace period, and KubeVirt answers `start` with 409 until it is final. The agent uncordons in
// the middle of the stop; restore follows the stop to its end, starts the VM again with the run
// strategy it had (Once, not the Always a plain start would leave), and every promise is kept.
import { afterEach, describe, expect, it } from 'vitest';
import { ANN } from '../../../src/sandbox/controllers/kubevirt/vmi.ts';
import { smallWorld } from '../../e2e/scenario.ts';
import { startStack, until, type Stack } from '../../e2e/stack.ts';

const VM = 'virtualmachines.kubevirt.io';
const VMI = 'virtualmachineinstances.kubevirt.io';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close(); // checks drainer's promises (src/invariants) before it stops everything
  stack = undefined;
});

describe('an uncordon in the middle of a KubeVirt stop (full stack)', () => {
  it('the VM runs again at the end, with its original runStrategy', async () => {
    stack = await startStack({
      scenario: smallWorld({
        servers: 0,
        extra: {
          kubevirt: {
            installed: true,
            migrationSeconds: 4,
            vmis: [{ name: 'vm-live', namespace: 'vms', node: 'node-a', evictionStrategy: 'LiveMigrate' }],
          },
        },
      }),
      config: { kubevirt: { pollInterval: 0.05 } },
    });
    const s = stack;
    const { store } = s.sandbox.kube;
    // the maintenance is a reboot that keeps the host's disks: a stopped VM may stay on it
    await s.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-a',
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'drainer.dev/reboot': 'true' } } },
    });
    store.create(VM, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'vm-batch', namespace: 'vms', annotations: { 'drainer.dev/maintenance': 'stop' } },
      spec: {
        runStrategy: 'Once',
        template: {
          metadata: { annotations: { [ANN.node]: 'node-a' } },
          spec: {
            evictionStrategy: 'LiveMigrate',
            terminationGracePeriodSeconds: 90,
            domain: { resources: { requests: { memory: '2Gi' } } },
          },
        },
      },
    });
    const vmi = () => store.find(VMI, 'vms', 'vm-batch');
    const phase = () => (vmi()?.status as { phase?: string } | undefined)?.phase;
    const strategy = () => (store.get(VM, 'vms', 'vm-batch').spec as { runStrategy?: string }).runStrategy;
    await until('vm-batch runs', () => phase() === 'Running');
    const before = vmi()!.metadata.uid;
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await s.cordon('node-a');
    await until('drainer is stopping vm-batch', () => vmi()?.metadata.deletionTimestamp);
    expect(strategy()).toBe('Halted'); // KubeVirt's stop of a Once VM
    expect(phase()).toBe('Running'); // its grace period runs
    await s.cordon('node-a', false);

    await until(
      'node-a is back in service',
      async () => ((await s.record('node-a')) ? undefined : true),
      20_000,
    );
    await until('vm-batch runs again', () => phase() === 'Running' && !vmi()?.metadata.deletionTimestamp);
    expect(vmi()!.metadata.uid).not.toBe(before);
    expect(strategy()).toBe('Once');
    expect((await s.node('node-a')).spec?.unschedulable).toBeFalsy();
    await s.assertPromisesKept();
  }, 45_000);
});
