// VirtualMachines on the sandbox for the KubeVirt plugin's stories: made, started, read.
import { ANN } from '../../../src/sandbox/controllers/kubevirt/vmi.ts';
import { NS, until, VMI, type World } from './harness.ts';

export const VM = 'virtualmachines.kubevirt.io';
export const KEY = 'drainer.dev/maintenance';

/** A VirtualMachine (maintenance: stop) whose VMI runs on node-1 and takes `grace` s to stop. */
export async function virtualMachine(w: World, name: string, runStrategy: string, grace = 30) {
  if (!w.sb.kube.store.find('namespaces', undefined, NS))
    w.sb.kube.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  w.sb.kube.store.create(VM, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS, annotations: { [KEY]: 'stop' } },
    spec: {
      runStrategy,
      template: {
        metadata: { labels: { 'vm.kubevirt.io/name': name }, annotations: { [ANN.node]: 'node-1' } },
        spec: {
          evictionStrategy: 'LiveMigrate',
          terminationGracePeriodSeconds: grace,
          domain: { resources: { requests: { memory: '1Gi' } } },
        },
      },
    },
  });
  if (runStrategy === 'Manual') await startVm(w, name);
  await until(`${name} running`, () => running(w, name));
  return w.sb.kube.store.get(VMI, NS, name).metadata.uid!;
}

export async function startVm(w: World, name: string) {
  await fetch(
    `${w.sb.kube.url}/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachines/${name}/start`,
    {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    },
  );
}

export const strategy = (w: World, name: string) =>
  (w.sb.kube.store.get(VM, NS, name).spec as { runStrategy?: string }).runStrategy;
export const instance = (w: World, name: string) => w.sb.kube.store.find(VMI, NS, name);
export const running = (w: World, name: string) =>
  (instance(w, name)?.status as { phase?: string } | undefined)?.phase === 'Running';
