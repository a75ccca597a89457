// Small facts about Kubernetes objects shared by the controllers.
import type { KubeObject } from '../kube/types.ts';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
}

export const taintsOf = (node: KubeObject): Taint[] => (node.spec as { taints?: Taint[] })?.taints ?? [];

const tolerates = (t: Toleration, taint: Taint): boolean => {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.operator === 'Exists') return !t.key || t.key === taint.key;
  return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
};

/** Whether a new pod with these tolerations may be scheduled to the node. */
export function schedulable(node: KubeObject, tolerations: readonly Toleration[] = []): boolean {
  if (node.metadata.deletionTimestamp) return false;
  const spec = node.spec as { unschedulable?: boolean } | undefined;
  const unschedulableTolerated = tolerations.some((t) =>
    tolerates(t, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }),
  );
  if (spec?.unschedulable && !unschedulableTolerated) return false;
  return taintsOf(node)
    .filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')
    .every((taint) => tolerations.some((t) => tolerates(t, taint)));
}

export interface PodStatus {
  phase?: string;
  conditions?: { type: string; status: string }[];
}

export const podStatus = (pod: KubeObject): PodStatus => pod.status ?? {};
export const podNode = (pod: KubeObject): string | undefined => (pod.spec as { nodeName?: string })?.nodeName;

export const isTerminal = (pod: KubeObject): boolean => {
  const phase = podStatus(pod).phase;
  return phase === 'Succeeded' || phase === 'Failed';
};

/** Counted by controllers: not being deleted and not finished. */
export const isActive = (pod: KubeObject): boolean => !pod.metadata.deletionTimestamp && !isTerminal(pod);

export const isReady = (pod: KubeObject): boolean =>
  podStatus(pod).phase === 'Running' &&
  (podStatus(pod).conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export const controllerOf = (obj: KubeObject) => obj.metadata.ownerReferences?.find((r) => r.controller);

export function matchesLabels(obj: KubeObject, selector: Record<string, string> | undefined): boolean {
  const labels = obj.metadata.labels ?? {};
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

/** Status of a Running, Ready pod as a kubelet reports it. */
export function runningPodStatus(pod: KubeObject, nowIso: string, podIp: string): Record<string, unknown> {
  const containers = (
    (pod.spec as { containers?: { name: string; image?: string }[] })?.containers ?? []
  ).map((c) => ({
    name: c.name,
    image: c.image ?? 'registry.example/app:1',
    imageID: '',
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: nowIso } },
  }));
  const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: nowIso });
  return {
    phase: 'Running',
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
      cond,
    ),
    hostIP: '10.0.0.1',
    podIP: podIp,
    podIPs: [{ ip: podIp }],
    startTime: nowIso,
    qosClass: 'BestEffort',
    containerStatuses: containers,
  };
}

let ipCounter = 0;
/** A fresh pod IP from 10.244.0.0/16. */
export function nextPodIp(): string {
  ipCounter = (ipCounter + 1) % 65_000;
  return `10.244.${Math.floor(ipCounter / 250)}.${(ipCounter % 250) + 2}`;
}
