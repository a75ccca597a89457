// Simulated kubelet: pods bound to a node start (Running/Ready after podStartSeconds); pods being
// deleted go away once their grace period has passed, as a kubelet confirms with a 0-grace delete.
import type { KubeObject } from '../kube/types.ts';
import { createLoop, Timers, watchAll } from './loop.ts';
import { RES, mutateStatus, tryGet, type StoreLike } from './store.ts';
import type { StartController } from './types.ts';
import { isTerminal, isoTime, nextPodIp, podNode, podStatus, runningPodStatus } from './util.ts';

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

export const startKubelet: StartController = ({ store, clock, timings, log }, signal) => {
  const onError = (e: unknown) => log?.warn({ err: e }, 'sandbox kubelet');
  const timers = new Timers((ms, fn) => clock.after(ms, fn), signal, onError);

  const start = (pod: KubeObject) => {
    mutateStatus(store, RES.pods, pod, (p) => {
      if (p.metadata.uid !== pod.metadata.uid || p.metadata.deletionTimestamp) return;
      if (podStatus(p).phase && podStatus(p).phase !== 'Pending') return;
      p.status = runningPodStatus(p, isoTime(clock.now()), nextPodIp());
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
      } else if (podNode(pod) && (podStatus(pod).phase ?? 'Pending') === 'Pending') {
        timers.set(`start/${uid}`, timings.podStartSeconds * 1000, () => start(pod));
      }
    }
  };

  const loop = createLoop(reconcile, signal, onError);
  watchAll((r, fn) => store.subscribe(r, fn), [RES.pods], loop, signal);
  loop.trigger();
};
