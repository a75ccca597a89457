// VMI lifecycle: a new VMI gets virt-controller's finalizer and a virt-launcher pod on its node and
// turns Running; a VMI whose launcher pod is deleted shuts down (Succeeded). A deleted VMI is a
// stop: virt-handler asks the guest to shut down and gives it the VMI's termination grace period
// (spec.terminationGracePeriodSeconds, else KubeVirt's DefaultGracePeriodSeconds, 30 s; see
// kubevirt.io/api core/v1 types.go and pkg/virt-handler/vm.go), so the VMI stays Running, with a
// deletionTimestamp, for that long in scenario time; then it is Succeeded, its launcher pods go and
// the finalizer is released.
import type { KubeObject } from '../../kube/types.ts';
import type { Clock } from '../../clock.ts';
import { pickNode } from '../scheduling.ts';
import { RES, mutate, mutateStatus, tryDelete, type StoreLike } from '../store.ts';
import { isFinalPhase } from './run-strategy.ts';
import { isActive, nextPodIp, podNode, runningPodStatus } from '../util.ts';
import {
  ANN,
  activeLauncher,
  launcherPod,
  launchersOf,
  liveMigratableCondition,
  vmiStatus,
  type VmiStatus,
} from './vmi.ts';

/** Creates a launcher pod on `node`, already Running (the simulation skips image pulls). */
export function createLauncher(store: StoreLike, vmi: KubeObject, node: string, migrationUid?: string) {
  const pod = store.create(RES.pods, launcherPod(vmi, node, migrationUid));
  return store.updateStatus(RES.pods, {
    ...pod,
    status: runningPodStatus(pod, store.stamps.at(), nextPodIp()),
  });
}

function place(store: StoreLike, vmi: KubeObject): void {
  const wanted = vmi.metadata.annotations?.[ANN.node];
  const node =
    wanted ??
    pickNode(store, { siblings: store.list(RES.pods, { labelSelector: 'kubevirt.io=virt-launcher' }) });
  if (!node) {
    mutateStatus(store, RES.vmis, vmi, (v) => {
      v.status = { ...vmiStatus(v), phase: 'Pending' };
    });
    return;
  }
  const pod = createLauncher(store, vmi, node);
  mutate(store, RES.vmis, vmi, (v) => {
    v.metadata.labels = { ...v.metadata.labels, 'kubevirt.io/nodeName': node };
    v.metadata.finalizers = [...new Set([...(v.metadata.finalizers ?? []), VMI_FINALIZER])];
  });
  const now = store.stamps.at();
  const ip = (pod.status as { podIP?: string }).podIP;
  mutateStatus(store, RES.vmis, vmi, (v) => {
    const status: VmiStatus = {
      ...vmiStatus(v),
      phase: 'Running',
      nodeName: node,
      activePods: { [pod.metadata.uid ?? '']: node },
      conditions: [
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: now } as never,
        liveMigratableCondition(v),
      ],
      interfaces: [{ name: 'default', ipAddress: ip, ipAddresses: [ip] }],
      guestOSInfo: {},
      // KubeVirt reports the guest memory it booted with (MemoryStatus)
      ...(guestMemory(v)
        ? {
            memory: {
              guestAtBoot: guestMemory(v),
              guestCurrent: guestMemory(v),
              guestRequested: guestMemory(v),
            },
          }
        : {}),
      launcherContainerImageVersion: 'quay.io/kubevirt/virt-launcher:v1.5.0',
      migrationMethod: 'LiveMigration',
      migrationTransport: 'Unix',
      qosClass: 'BestEffort',
      phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: now }],
    };
    v.status = status;
  });
}

const guestMemory = (vmi: KubeObject): string | undefined =>
  (vmi.spec as { domain?: { resources?: { requests?: { memory?: string } } } } | undefined)?.domain?.resources
    ?.requests?.memory;

function shutDown(store: StoreLike, vmi: KubeObject): void {
  mutateStatus(store, RES.vmis, vmi, (v) => {
    const s = vmiStatus(v);
    v.status = {
      ...s,
      phase: 'Succeeded',
      conditions: (s.conditions ?? []).map((c) =>
        c.type === 'Ready' ? { ...c, status: 'False', reason: 'PodTerminating' } : c,
      ),
      phaseTransitionTimestamps: [
        ...((s.phaseTransitionTimestamps as unknown[]) ?? []),
        { phase: 'Succeeded', phaseTransitionTimestamp: store.stamps.at() },
      ],
    };
  });
}

/** virt-controller's finalizer on every VMI it runs (KubeVirt's VirtualMachineInstanceFinalizer). */
export const VMI_FINALIZER = 'foregroundDeleteVirtualMachine';
/** KubeVirt's DefaultGracePeriodSeconds, for a VMI whose spec sets none. */
export const DEFAULT_VMI_GRACE_SECONDS = 30;

const graceSeconds = (vmi: KubeObject): number =>
  (vmi.spec as { terminationGracePeriodSeconds?: number } | undefined)?.terminationGracePeriodSeconds ??
  DEFAULT_VMI_GRACE_SECONDS;

/** A deleted VMI: Running through its grace period (a wake-up is asked for its end), then gone. */
function stopping(store: StoreLike, clock: Clock, vmi: KubeObject, wakeIn: WakeIn): void {
  const phase = vmiStatus(vmi).phase;
  if (phase === 'Running' && activeLauncher(store, vmi)) {
    // the deletionTimestamp is real time; the grace period runs on the scenario clock
    const end = store.stamps.metaMoment(vmi, 'deletionTimestamp') + graceSeconds(vmi) * 1000;
    const left = end - clock.now();
    if (left > 0) return wakeIn(`${vmi.metadata.uid}`, left);
  }
  if (!isFinalPhase(phase) && phase) shutDown(store, vmi);
  for (const p of launchersOf(store, vmi))
    tryDelete(store, RES.pods, p.metadata.namespace, p.metadata.name ?? '');
  mutate(store, RES.vmis, vmi, (v) => {
    v.metadata.finalizers = (v.metadata.finalizers ?? []).filter((f) => f !== VMI_FINALIZER);
  });
}

/** Asks the controller loop to run again in `ms` (scenario time), once per key. */
export type WakeIn = (key: string, ms: number) => void;

export function reconcileVmis(store: StoreLike, clock: Clock, wakeIn: WakeIn = () => {}): void {
  const vmis = store.list(RES.vmis);
  const uids = new Set(vmis.map((v) => v.metadata.uid));
  for (const vmi of vmis) {
    const phase = vmiStatus(vmi).phase;
    if (vmi.metadata.deletionTimestamp) {
      stopping(store, clock, vmi, wakeIn);
    } else if (!phase || phase === 'Pending') {
      place(store, vmi);
    } else if (phase === 'Running') {
      if (!activeLauncher(store, vmi)) shutDown(store, vmi);
      else syncMigratable(store, vmi);
    }
  }
  // Garbage collection of launcher pods whose VMI is gone (the owner reference says so).
  for (const pod of store.list(RES.pods, { labelSelector: 'kubevirt.io=virt-launcher' })) {
    if (!uids.has(pod.metadata.labels?.['kubevirt.io/created-by']) && isActive(pod) && podNode(pod))
      tryDelete(store, RES.pods, pod.metadata.namespace, pod.metadata.name ?? '');
  }
}

/** Keeps LiveMigratable in step with the sandbox annotation (users may flip it with kubectl). */
function syncMigratable(store: StoreLike, vmi: KubeObject): void {
  mutateStatus(store, RES.vmis, vmi, (v) => {
    const s = vmiStatus(v);
    const want = liveMigratableCondition(v);
    const others = (s.conditions ?? []).filter((c) => c.type !== 'LiveMigratable');
    v.status = { ...s, conditions: [...others, want] };
  });
}
