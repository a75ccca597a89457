// Simulated disruption controller: PodDisruptionBudget status from the pods it selects, and the
// disruptedPods the Eviction API adds are dropped once those pods are gone or being deleted.
import { disruptedAt } from '../kube/eviction.ts';
import type { KubeObject } from '../kube/types.ts';
import { createLoop, watchAll } from './loop.ts';
import { budgetStatus, type Budget } from './pdb-math.ts';
import { RES, mutateStatus, tryGet, type StoreLike } from './store.ts';
import type { StartController } from './types.ts';
import { controllerOf, isReady, matchesLabels } from './util.ts';

/** The eviction API's mark expires after two minutes, as upstream. */
const DISRUPTION_EXPIRY_MS = 2 * 60_000;

interface PdbSpec extends Budget {
  selector?: { matchLabels?: Record<string, string> };
}

/** Sum of the scales of the pods' controllers; a pod without one counts as one. */
function controllerScale(store: StoreLike, pods: readonly KubeObject[]): number {
  const seen = new Set<string>();
  let total = 0;
  for (const pod of pods) {
    const ref = controllerOf(pod);
    if (!ref) {
      total += 1;
      continue;
    }
    if (seen.has(ref.uid)) continue;
    seen.add(ref.uid);
    const ns = pod.metadata.namespace;
    if (ref.kind === 'ReplicaSet') {
      total +=
        ((tryGet(store, RES.replicasets, ns, ref.name)?.spec as { replicas?: number })?.replicas ?? 1) | 0;
    } else if (ref.kind === 'DaemonSet') {
      const ds = tryGet(store, RES.daemonsets, ns, ref.name);
      total += (ds?.status as { desiredNumberScheduled?: number })?.desiredNumberScheduled ?? 0;
    } else {
      total += 1;
    }
  }
  return total;
}

function reconcilePdb(store: StoreLike, pdb: KubeObject, allPods: readonly KubeObject[], now: number): void {
  const spec = (pdb.spec ?? {}) as PdbSpec;
  const pods = allPods.filter(
    (p) => p.metadata.namespace === pdb.metadata.namespace && matchesLabels(p, spec.selector?.matchLabels),
  );
  const byName = new Map(pods.map((p) => [p.metadata.name ?? '', p]));
  const previous = (pdb.status as { disruptedPods?: Record<string, string> })?.disruptedPods ?? {};
  const disrupted: Record<string, string> = {};
  for (const [name, at] of Object.entries(previous)) {
    const pod = byName.get(name);
    // the mark is real time; its expiry runs on the scenario clock
    const markedAt = store.stamps.momentOf(pdb.metadata.uid, disruptedAt(name), Date.parse(at));
    if (pod && !pod.metadata.deletionTimestamp && markedAt + DISRUPTION_EXPIRY_MS > now) disrupted[name] = at;
  }
  const healthy = pods.filter(
    (p) => !p.metadata.deletionTimestamp && !((p.metadata.name ?? '') in disrupted) && isReady(p),
  ).length;
  const s = budgetStatus(spec, {
    matchingPods: pods.length,
    controllerScale: controllerScale(store, pods),
    currentHealthy: healthy,
  });
  mutateStatus(store, RES.pdbs, pdb, (o) => {
    const old = (o.status ?? {}) as { conditions?: { status: string; lastTransitionTime?: string }[] };
    const allowed = s.disruptionsAllowed > 0 ? 'True' : 'False';
    const prev = old.conditions?.[0];
    o.status = {
      observedGeneration: pdb.metadata.generation ?? 1,
      ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
      disruptionsAllowed: s.disruptionsAllowed,
      currentHealthy: s.currentHealthy,
      desiredHealthy: s.desiredHealthy,
      expectedPods: s.expectedPods,
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: allowed,
          reason: allowed === 'True' ? 'SufficientPods' : 'InsufficientPods',
          message: '',
          observedGeneration: pdb.metadata.generation ?? 1,
          lastTransitionTime:
            prev?.status === allowed && prev.lastTransitionTime
              ? prev.lastTransitionTime
              : store.stamps.at(now),
        },
      ],
    };
  });
}

export const startDisruption: StartController = ({ store, clock, log }, signal) => {
  const reconcile = () => {
    const pods = store.list(RES.pods);
    for (const pdb of store.list(RES.pdbs)) reconcilePdb(store, pdb, pods, clock.now());
  };
  const loop = createLoop(reconcile, signal, (e) => log?.warn({ err: e }, 'sandbox disruption controller'));
  watchAll(
    (r, fn) => store.subscribe(r, fn),
    [RES.pods, RES.pdbs, RES.replicasets, RES.daemonsets],
    loop,
    signal,
  );
  loop.trigger();
};
