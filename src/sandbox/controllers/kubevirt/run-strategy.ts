// A VirtualMachine's run strategy and state-change requests, read as KubeVirt reads them
// (kubevirt.io/api core/v1 VirtualMachine.RunStrategy(): spec.runStrategy, else spec.running, else
// Halted), shared by virt-api's stop/start (vm-actions.ts) and the VM controller (vm-controller.ts).
import type { KubeObject } from '../../kube/types.ts';

export const RUN_STRATEGIES = ['Always', 'RerunOnFailure', 'Manual', 'Halted', 'Once'] as const;
export type RunStrategy = (typeof RUN_STRATEGIES)[number];

export interface StateChangeRequest {
  action: 'Start' | 'Stop';
  uid?: string;
}

interface VmSpec {
  runStrategy?: string;
  running?: boolean;
}

export function runStrategyOf(vm: KubeObject): RunStrategy {
  const spec = (vm.spec ?? {}) as VmSpec;
  if (spec.runStrategy && (RUN_STRATEGIES as readonly string[]).includes(spec.runStrategy))
    return spec.runStrategy as RunStrategy;
  return spec.running === true ? 'Always' : 'Halted';
}

/** Sets the strategy where the VM keeps it (spec.runStrategy, else the older spec.running). */
export function setRunStrategy(vm: KubeObject, to: RunStrategy): void {
  const spec = (vm.spec ?? {}) as VmSpec;
  vm.spec =
    spec.runStrategy === undefined && spec.running !== undefined && (to === 'Always' || to === 'Halted')
      ? { ...spec, running: to === 'Always' }
      : { ...spec, runStrategy: to };
}

export const changeRequests = (vm: KubeObject): StateChangeRequest[] =>
  (vm.status as { stateChangeRequests?: StateChangeRequest[] } | undefined)?.stateChangeRequests ?? [];

export const isFinalPhase = (phase: string | undefined): boolean =>
  phase === 'Succeeded' || phase === 'Failed';
