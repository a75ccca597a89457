// virt-controller's VirtualMachine controller, its run strategies as KubeVirt syncs them
// (pkg/virt-controller/watch/vm/vm.go, syncRunStrategy and isTrimFirstChangeRequestNeeded):
// - Always: a VMI always runs; a final one, or one a stop request names, is deleted and a new one made.
// - RerunOnFailure: a Failed VMI is deleted and started again; a Succeeded one is deleted and stays
//   stopped; with no VMI it starts on a start request (or a strategy it has not synced yet).
// - Manual: only state-change requests start or stop it; a final VMI is kept.
// - Halted: any VMI is deleted; a start request turns the strategy to Always.
// - Once: a VMI is started when there is none; a final one is kept, never started again.
// Deleting a VMI is its stop: it stays Running for its termination grace period (lifecycle.ts).
// A VMI whose VirtualMachine is gone is deleted, as the garbage collector follows its owner reference.
import type { KubeObject } from '../../kube/types.ts';
import { RES, mutate, mutateStatus, tryDelete, tryGet, type StoreLike } from '../store.ts';
import { changeRequests, isFinalPhase, runStrategyOf, type RunStrategy } from './run-strategy.ts';
import { vmiStatus } from './vmi.ts';

const vmOwner = (vmi: KubeObject) => vmi.metadata.ownerReferences?.find((o) => o.kind === 'VirtualMachine');

function startVmi(store: StoreLike, vm: KubeObject): void {
  const template =
    (vm.spec as { template?: { metadata?: KubeObject['metadata']; spec?: unknown } }).template ?? {};
  const name = vm.metadata.name ?? '';
  store.create(RES.vmis, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      ...template.metadata,
      name,
      namespace: vm.metadata.namespace,
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
}

const stopVmi = (store: StoreLike, vmi: KubeObject): void => {
  if (!vmi.metadata.deletionTimestamp)
    tryDelete(store, RES.vmis, vmi.metadata.namespace, vmi.metadata.name ?? '');
};

interface Sync {
  readonly store: StoreLike;
  readonly vm: KubeObject;
  readonly vmi: KubeObject | undefined;
  /** The first state-change request is a stop of this VMI. */
  readonly stopAsked: boolean;
  /** The first state-change request is a start. */
  readonly startAsked: boolean;
}

const phaseOf = (vmi: KubeObject | undefined) => (vmi ? vmiStatus(vmi).phase : undefined);

/** What each run strategy asks of the VM's VMI (vm.go's syncRunStrategy). */
const STRATEGIES: Record<RunStrategy, (s: Sync) => void> = {
  Always({ store, vm, vmi, stopAsked }) {
    if (!vmi) return startVmi(store, vm);
    if (stopAsked || isFinalPhase(phaseOf(vmi))) stopVmi(store, vmi);
  },
  RerunOnFailure({ store, vm, vmi, stopAsked, startAsked }) {
    if (vmi) {
      const phase = phaseOf(vmi);
      if (vmi.metadata.deletionTimestamp || !(stopAsked || isFinalPhase(phase))) return;
      stopVmi(store, vmi);
      if (phase === 'Failed') addStart(store, vm);
      return;
    }
    // a strategy not synced yet (status.runStrategy) counts as a start
    const synced = (vm.status as { runStrategy?: string } | undefined)?.runStrategy === 'RerunOnFailure';
    if (startAsked || !synced) startVmi(store, vm);
  },
  Manual({ store, vm, vmi, stopAsked, startAsked }) {
    if (vmi && stopAsked) stopVmi(store, vmi);
    else if (!vmi && startAsked) startVmi(store, vm);
  },
  Halted({ store, vm, vmi, startAsked }) {
    if (vmi) return stopVmi(store, vmi);
    if (startAsked)
      mutate(store, RES.vms, vm, (v) => {
        v.spec = { ...(v.spec as object), runStrategy: 'Always' };
      });
  },
  Once({ store, vm, vmi }) {
    if (!vmi) startVmi(store, vm);
  },
};

function syncStrategy(store: StoreLike, vm: KubeObject, vmi: KubeObject | undefined, s: RunStrategy): void {
  const [first] = changeRequests(vm);
  STRATEGIES[s]({
    store,
    vm,
    vmi,
    stopAsked: !!vmi && first?.action === 'Stop' && first.uid === vmi.metadata.uid,
    startAsked: first?.action === 'Start',
  });
}

function addStart(store: StoreLike, vm: KubeObject): void {
  mutateStatus(store, RES.vms, vm, (v) => {
    v.status = { ...(v.status ?? {}), stateChangeRequests: [...changeRequests(v), { action: 'Start' }] };
  });
}

/** Drops the first state-change request once acted on (vm.go's isTrimFirstChangeRequestNeeded). */
function trimmed(vm: KubeObject, vmi: KubeObject | undefined): boolean {
  const [first] = changeRequests(vm);
  if (!first) return false;
  if (first.action === 'Stop') return !vmi || !first.uid || first.uid !== vmi.metadata.uid;
  return !!vmi && !vmi.metadata.deletionTimestamp && !isFinalPhase(vmiStatus(vmi).phase);
}

function syncStatus(store: StoreLike, vm: KubeObject, s: RunStrategy): void {
  const vmi = tryGet(store, RES.vmis, vm.metadata.namespace, vm.metadata.name ?? '');
  const current = tryGet(store, RES.vms, vm.metadata.namespace, vm.metadata.name ?? '');
  if (!current) return;
  const running = !!vmi && vmiStatus(vmi).phase === 'Running' && !vmi.metadata.deletionTimestamp;
  mutateStatus(store, RES.vms, current, (v) => {
    const requests = changeRequests(v);
    const rest = trimmed(v, vmi) ? requests.slice(1) : requests;
    v.status = {
      ...(v.status ?? {}),
      runStrategy: s,
      created: !!vmi,
      ready: running,
      printableStatus: vmi?.metadata.deletionTimestamp
        ? 'Stopping'
        : running
          ? 'Running'
          : vmi
            ? 'Starting'
            : 'Stopped',
      ...(rest.length ? { stateChangeRequests: rest } : {}),
    };
    if (!rest.length) delete (v.status as { stateChangeRequests?: unknown }).stateChangeRequests;
  });
}

export function reconcileVms(store: StoreLike): void {
  let vms: KubeObject[];
  try {
    vms = store.list(RES.vms);
  } catch {
    return; // the VirtualMachine CRD is not served
  }
  const uids = new Set(vms.map((v) => v.metadata.uid));
  for (const vm of vms) {
    if (vm.metadata.deletionTimestamp) continue;
    const vmi = tryGet(store, RES.vmis, vm.metadata.namespace, vm.metadata.name ?? '');
    const owned = vmi && vmOwner(vmi)?.uid === vm.metadata.uid ? vmi : undefined;
    if (vmi && !owned) continue; // a VMI of the same name that is not this VM's
    const s = runStrategyOf(vm);
    syncStrategy(store, vm, owned, s);
    syncStatus(store, vm, s);
  }
  for (const vmi of store.list(RES.vmis)) {
    const owner = vmOwner(vmi);
    if (owner && !uids.has(owner.uid)) stopVmi(store, vmi);
  }
}
