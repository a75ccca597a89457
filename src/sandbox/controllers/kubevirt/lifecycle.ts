// VMI lifecycle: a new VMI gets a virt-launcher pod on its node and turns Running; a VMI whose
// launcher pod is deleted shuts down (Succeeded); launcher pods of deleted VMIs are removed.
import type { KubeObject } from '../../kube/types.ts';
import type { Clock } from '../../clock.ts';
import { pickNode } from '../scheduling.ts';
import { RES, mutate, mutateStatus, tryDelete, type StoreLike } from '../store.ts';
import { isActive, isoTime, nextPodIp, podNode, runningPodStatus } from '../util.ts';
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
export function createLauncher(
  store: StoreLike,
  clock: Clock,
  vmi: KubeObject,
  node: string,
  migrationUid?: string,
) {
  const pod = store.create(RES.pods, launcherPod(vmi, node, migrationUid));
  return store.updateStatus(RES.pods, {
    ...pod,
    status: runningPodStatus(pod, isoTime(clock.now()), nextPodIp()),
  });
}

function place(store: StoreLike, clock: Clock, vmi: KubeObject): void {
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
  const pod = createLauncher(store, clock, vmi, node);
  mutate(store, RES.vmis, vmi, (v) => {
    v.metadata.labels = { ...v.metadata.labels, 'kubevirt.io/nodeName': node };
  });
  const now = isoTime(clock.now());
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

function shutDown(store: StoreLike, clock: Clock, vmi: KubeObject): void {
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
        { phase: 'Succeeded', phaseTransitionTimestamp: isoTime(clock.now()) },
      ],
    };
  });
}

export function reconcileVmis(store: StoreLike, clock: Clock): void {
  const vmis = store.list(RES.vmis);
  const uids = new Set(vmis.map((v) => v.metadata.uid));
  for (const vmi of vmis) {
    const phase = vmiStatus(vmi).phase;
    if (vmi.metadata.deletionTimestamp) {
      for (const p of launchersOf(store, vmi))
        tryDelete(store, RES.pods, p.metadata.namespace, p.metadata.name ?? '');
    } else if (!phase || phase === 'Pending') {
      place(store, clock, vmi);
    } else if (phase === 'Running') {
      if (!activeLauncher(store, vmi)) shutDown(store, clock, vmi);
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
