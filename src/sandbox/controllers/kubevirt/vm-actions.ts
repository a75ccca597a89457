// virt-api's VirtualMachine stop and start subresources, as KubeVirt answers them
// (pkg/virt-api/rest/lifecycle.go, StartVMRequestHandler and StopVMRequestHandler). They only
// write the VM: Always and Once are stopped by setting runStrategy Halted, Halted is started by
// setting Always, Manual and RerunOnFailure get a state-change request in the VM's status and keep
// their strategy. The VM controller (vm-controller.ts) then stops or starts the VMI, taking the
// time it takes: `start` answers 409 "VM is already running" while the old VMI is not final,
// which includes the whole termination grace period of a VMI being stopped.
import type { ApiAnswer } from '../../kube/extensions.ts';
import { failure } from '../../kube/status.ts';
import type { KubeObject } from '../../kube/types.ts';
import { RES, mutate, mutateStatus, tryGet, type StoreLike } from '../store.ts';
import {
  changeRequests,
  isFinalPhase,
  runStrategyOf,
  setRunStrategy,
  type StateChangeRequest,
} from './run-strategy.ts';
import { vmiStatus } from './vmi.ts';

const conflict = (name: string, why: string): ApiAnswer => ({
  code: 409,
  body: failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on virtualmachine.kubevirt.io "${name}": ${why}`,
  ),
});

const ACCEPTED: ApiAnswer = { code: 202, body: {} };

function request(store: StoreLike, vm: KubeObject, ...add: StateChangeRequest[]): void {
  mutateStatus(store, RES.vms, vm, (v) => {
    v.status = { ...(v.status ?? {}), stateChangeRequests: [...changeRequests(v), ...add] };
  });
}

function start(store: StoreLike, vm: KubeObject, vmi: KubeObject | undefined, name: string): ApiAnswer {
  const phase = vmi ? vmiStatus(vmi).phase : undefined;
  // not final, and past the unset/Unknown phase: a VMI that still runs (or is still stopping)
  if (vmi && !isFinalPhase(phase) && phase && phase !== 'Unknown')
    return conflict(name, 'VM is already running');
  const strategy = runStrategyOf(vm);
  switch (strategy) {
    case 'Halted':
      mutate(store, RES.vms, vm, (v) => setRunStrategy(v, 'Always'));
      return ACCEPTED;
    case 'RerunOnFailure':
    case 'Manual': {
      if (strategy === 'RerunOnFailure' && phase === 'Failed')
        return conflict(name, 'RerunOnFailure does not support starting VM from failed state');
      const restart =
        vmi && ((strategy === 'RerunOnFailure' && phase === 'Succeeded') || isFinalPhase(phase));
      request(store, vm, ...(restart ? [{ action: 'Stop' as const, uid: vmi.metadata.uid ?? '' }] : []), {
        action: 'Start',
      });
      return ACCEPTED;
    }
    case 'Always':
    case 'Once':
      return conflict(name, `${strategy} does not support manual start requests`);
  }
}

function stop(store: StoreLike, vm: KubeObject, vmi: KubeObject | undefined, name: string): ApiAnswer {
  const running = !!vmi && !isFinalPhase(vmiStatus(vmi).phase);
  const strategy = runStrategyOf(vm);
  switch (strategy) {
    case 'Halted':
      if (!running) return conflict(name, 'VM is not running');
      // only a stop with a shorter grace period is taken (drainer never sends one)
      return conflict(name, 'Halted only supports manual stop requests with a shorter graceperiod');
    case 'RerunOnFailure':
    case 'Manual':
      if (!running) return conflict(name, 'VM is not running');
      request(store, vm, { action: 'Stop', uid: vmi.metadata.uid ?? '' });
      return ACCEPTED;
    case 'Always':
    case 'Once':
      mutate(store, RES.vms, vm, (v) => setRunStrategy(v, 'Halted'));
      return ACCEPTED;
  }
}

export function vmAction(store: StoreLike, ns: string, name: string, action: string): ApiAnswer {
  const vm = tryGet(store, RES.vms, ns, name);
  if (!vm)
    return {
      code: 404,
      body: failure(404, 'NotFound', `virtualmachine.kubevirt.io "${name}" not found`),
    };
  const vmi = tryGet(store, RES.vmis, ns, name);
  return action === 'stop' ? stop(store, vm, vmi, name) : start(store, vm, vmi, name);
}
