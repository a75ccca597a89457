// Simulated kubelet: pods bound to a node start (Running/Ready after podStartSeconds, or Pending in
// ImagePullBackOff when their image is one the scenario cannot pull); pods being deleted go away
// once their grace period has passed and their finalizers are gone, as a kubelet confirms with a
// 0-grace delete.
import type { KubeObject } from '../kube/types.ts';
import { createLoop, Timers, watchAll } from './loop.ts';
import { RES, mutateStatus, tryGet, type StoreLike } from './store.ts';
import type { StartController } from './types.ts';
import { isTerminal, nextPodIp, podNode, podStatus, runningPodStatus } from './util.ts';

/** Removes a pod whose deletion is under way (the kubelet's final, 0-grace delete). */
export function finishPodDeletion(store: StoreLike, pod: KubeObject): void {
  const current = tryGet(store, RES.pods, pod.metadata.namespace, pod.metadata.name ?? '');
  if (!current || current.metadata.uid !== pod.metadata.uid) return;
  const finalize = (
    store as { finalizeDeletion?: (res: string, ns: string | undefined, name: string) => void }
  ).finalizeDeletion;
  if (finalize) finalize.call(store, RES.pods, pod.metadata.namespace, pod.metadata.name ?? '');
  else store.delete(RES.pods, pod.metadata.namespace, pod.metadata.name ?? '', { gracePeriodSeconds: 0 });
}

/** A pod whose image cannot be pulled: Pending, its container waiting in ImagePullBackOff, not Ready. */
function pullFailedStatus(pod: KubeObject, image: string, nowIso: string): Record<string, unknown> {
  const containers = (
    (pod.spec as { containers?: { name: string; image?: string }[] })?.containers ?? []
  ).map((c) => ({
    name: c.name,
    image: c.image ?? image,
    imageID: '',
    ready: false,
    started: false,
    restartCount: 0,
    state: {
      waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${c.image ?? image}"` },
    },
  }));
  const cond = (type: string, status: string) => ({
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime: nowIso,
    ...(status === 'False' ? { reason: 'ContainersNotReady' } : {}),
  });
  return {
    phase: 'Pending',
    conditions: [
      cond('Initialized', 'True'),
      cond('Ready', 'False'),
      cond('ContainersReady', 'False'),
      cond('PodScheduled', 'True'),
    ],
    hostIP: '10.0.0.1',
    startTime: nowIso,
    qosClass: 'BestEffort',
    containerStatuses: containers,
  };
}

export const startKubelet: StartController = ({ store, clock, timings, log, unpullableImages }, signal) => {
  const onError = (e: unknown) => log?.warn({ err: e }, 'sandbox kubelet');
  const timers = new Timers((ms, fn) => clock.after(ms, fn), signal, onError);
  const unpullable = new Set(unpullableImages ?? []);

  const start = (pod: KubeObject) => {
    mutateStatus(store, RES.pods, pod, (p) => {
      if (p.metadata.uid !== pod.metadata.uid || p.metadata.deletionTimestamp) return;
      if (podStatus(p).phase && podStatus(p).phase !== 'Pending') return;
      const images = ((p.spec as { containers?: { image?: string }[] })?.containers ?? []).map(
        (c) => c.image ?? '',
      );
      const bad = images.find((i) => unpullable.has(i));
      p.status = bad
        ? pullFailedStatus(p, bad, store.stamps.at())
        : runningPodStatus(p, store.stamps.at(), nextPodIp());
    });
  };

  const reconcile = () => {
    for (const pod of store.list(RES.pods)) {
      const uid = pod.metadata.uid ?? '';
      if (pod.metadata.deletionTimestamp) {
        timers.cancel(`start/${uid}`);
        // Finished or never scheduled pods have no containers to stop.
        const grace = !podNode(pod) || isTerminal(pod) ? 0 : (pod.metadata.deletionGracePeriodSeconds ?? 0);
        timers.set(`delete/${uid}`, grace * 1000, () => finishPodDeletion(store, pod));
      } else if (
        podNode(pod) &&
        (podStatus(pod).phase ?? 'Pending') === 'Pending' &&
        !(podStatus(pod) as { containerStatuses?: unknown[] }).containerStatuses
      ) {
        timers.set(`start/${uid}`, timings.podStartSeconds * 1000, () => start(pod));
      }
    }
  };

  const loop = createLoop(reconcile, signal, onError);
  watchAll((r, fn) => store.subscribe(r, fn), [RES.pods], loop, signal);
  loop.trigger();
};
