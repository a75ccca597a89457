// A migration's target: the launcher pod it creates at Scheduling, and how long the copy runs.
import type { KubeObject } from '../../kube/types.ts';
import { pickNode } from '../scheduling.ts';
import { RES, mutateStatus, type StoreLike } from '../store.ts';
import { nextPodIp, runningPodStatus } from '../util.ts';
import { ANN, launcherPod, vmiStatus } from './vmi.ts';

/**
 * Creates the target launcher pod of migration `migrationUid`: bound and running on a node with room
 * other than the VMI's, or, where none has room, Pending and Unschedulable (it still takes its slot,
 * as KubeVirt's does). Returns whether it was bound.
 */
export function createTargetPod(
  store: StoreLike,
  vmi: KubeObject,
  migrationUid: string | undefined,
  siblings: KubeObject[],
  now: string,
): boolean {
  const source = vmiStatus(vmi).nodeName ?? '';
  const node = pickNode(store, { siblings, exclude: [source] });
  const spec = launcherPod(vmi, node ?? '', migrationUid);
  if (!node) delete (spec.spec as { nodeName?: string }).nodeName;
  const pod = store.create(RES.pods, spec);
  if (node) {
    store.updateStatus(RES.pods, { ...pod, status: runningPodStatus(pod, now, nextPodIp()) });
    return true;
  }
  mutateStatus(store, RES.pods, pod, (p) => {
    p.status = {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/0 nodes are available: no node has room.',
          lastTransitionTime: now,
        },
      ],
    };
  });
  return false;
}

/** How long the VMI's memory copy runs: its annotation's seconds, else the sandbox's default. */
export function migrationMs(vmi: KubeObject, defaultSeconds: number): number {
  const raw = vmi.metadata.annotations?.[ANN.migrationSeconds];
  const s = Number(raw);
  return (Number.isFinite(s) && s >= 0 && raw ? s : defaultSeconds) * 1000;
}
