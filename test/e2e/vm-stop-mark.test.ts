// Story (issue 48 item 1): drainer stops a VirtualMachine (drainer.dev/maintenance: stop) and marks
// it (drainer.dev/stopped) before the stop. Right after, the Node is deleted and registered again
// (Karpenter, Cluster API, `kubectl delete node`), which takes the record along. The node's agent
// finds the mark naming its node once the node is in service, starts the VM and takes the mark off.
import { afterEach, describe, expect, it } from 'vitest';
import { ANN } from '../../src/sandbox/controllers/kubevirt/vmi.ts';
import { smallWorld } from './scenario.ts';
import { nodeEvents, startStack, until, type Stack } from './stack.ts';
import { deleteNode, registerAgain } from './re-register.ts';

const VM = 'virtualmachines.kubevirt.io';
const VMI = 'virtualmachineinstances.kubevirt.io';
const MARK = 'drainer.dev/stopped';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('a VirtualMachine drainer stopped outlives its Node (full stack)', () => {
  it('the Node deleted and registered again right after the stop: the VM runs again once the node is in service', async () => {
    const s = (stack = await startStack({
      scenario: smallWorld({ servers: 0, extra: { kubevirt: { installed: true } } }),
      config: { resyncInterval: 1 },
    }));
    const { store } = s.sandbox.kube;
    store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vms' } });
    store.create(VM, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'vm-stop', namespace: 'vms', annotations: { 'drainer.dev/maintenance': 'stop' } },
      spec: {
        runStrategy: 'Always',
        template: {
          metadata: { annotations: { [ANN.node]: 'node-a' } },
          spec: { evictionStrategy: 'LiveMigrate', terminationGracePeriodSeconds: 1 },
        },
      },
    });
    const vmi = () => store.find(VMI, 'vms', 'vm-stop');
    const running = () => (vmi()?.status as { phase?: string } | undefined)?.phase === 'Running';
    const mark = () => store.get(VM, 'vms', 'vm-stop').metadata.annotations?.[MARK];
    await until('vm-stop running', running);
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await s.cordon('node-a');
    await until('vm-stop stopped', () => !vmi(), 30_000);
    expect(JSON.parse(mark() ?? '{}')).toMatchObject({ node: 'node-a', runStrategy: 'Always' });

    await registerAgain(s, await deleteNode(s, 'node-a'));

    await until('vm-stop running again', running, 30_000);
    await until('its mark taken off', () => mark() === undefined);
    const told = await until('StrandedService Event', async () =>
      (await nodeEvents(s, 'node-a', 'StrandedService')).find((m) => m.includes('vm-stop')),
    );
    expect(told).toMatch(
      /VirtualMachine\(s\) drainer stopped: vms\/vm-stop .* restored, the node is in service/,
    );
  });
});
