// virt-api's VirtualMachine stop and start subresources, as far as drainer uses them: stop halts
// the VM (runStrategy Halted) and its VMI goes; start runs it again (runStrategy Always) and a VMI
// is created from spec.template, placed by the scheduler. KubeVirt's VM controller does the second
// half asynchronously; the emulation does it at once. (KubeVirt: pkg/virt-api/rest, StopVMRequestHandler
// and StartVMRequestHandler; pkg/virt-controller/watch/vm.go.)
import type { ApiAnswer } from '../../kube/extensions.ts';
import { failure } from '../../kube/status.ts';
import type { KubeObject } from '../../kube/types.ts';
import { RES, mutate, tryDelete, tryGet, type StoreLike } from '../store.ts';

const answer = (code: number, reason: string, message: string): ApiAnswer => ({
  code,
  body: failure(code, reason, message),
});

const vmiOf = (store: StoreLike, vm: KubeObject) =>
  tryGet(store, RES.vmis, vm.metadata.namespace, vm.metadata.name ?? '');

export function vmAction(store: StoreLike, ns: string, name: string, action: string): ApiAnswer {
  const vm = tryGet(store, RES.vms, ns, name);
  if (!vm) return answer(404, 'NotFound', `virtualmachine.kubevirt.io "${name}" not found`);
  if (action === 'stop') {
    mutate(store, RES.vms, vm, (v) => {
      v.spec = { ...(v.spec as object), runStrategy: 'Halted' };
    });
    if (vmiOf(store, vm)) tryDelete(store, RES.vmis, ns, name);
    return { code: 202, body: {} };
  }
  if (vmiOf(store, vm)) return answer(409, 'Conflict', 'Always does not support manual start requests');
  mutate(store, RES.vms, vm, (v) => {
    v.spec = { ...(v.spec as object), runStrategy: 'Always' };
  });
  const template =
    (vm.spec as { template?: { metadata?: KubeObject['metadata']; spec?: unknown } }).template ?? {};
  store.create(RES.vmis, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      ...template.metadata,
      name,
      namespace: ns,
      ownerReferences: [
        {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachine',
          name,
          uid: vm.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: template.spec ?? {},
  });
  return { code: 202, body: {} };
}
