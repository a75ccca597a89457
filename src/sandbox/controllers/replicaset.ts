// Simulated ReplicaSet controller (it also picks the node, standing in for the scheduler): keeps spec.replicas active pods,
// creating replacements for evicted or deleted ones on schedulable nodes, and reports status.
import type { KubeObject } from '../kube/types.ts';
import { createLoop, watchAll } from './loop.ts';
import { pickNode, tolerationsOf } from './scheduling.ts';
import { RES, mutateStatus, tryDelete, type StoreLike } from './store.ts';
import type { StartController } from './types.ts';
import { controllerOf, isActive, isReady, matchesLabels } from './util.ts';

interface RsSpec {
  replicas?: number;
  selector?: { matchLabels?: Record<string, string> };
  template?: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: object;
  };
}

function podFromTemplate(rs: KubeObject): KubeObject {
  const spec = (rs.spec ?? {}) as RsSpec;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata.name}-`,
      namespace: rs.metadata.namespace,
      labels: { ...spec.template?.metadata?.labels },
      annotations: { ...spec.template?.metadata?.annotations },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: rs.metadata.name ?? '',
          uid: rs.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: structuredClone(
      spec.template?.spec ?? { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    ),
  };
}

function reconcileReplicaSet(store: StoreLike, rs: KubeObject, pods: readonly KubeObject[]): void {
  const spec = (rs.spec ?? {}) as RsSpec;
  const owned = pods.filter((p) => controllerOf(p)?.uid === rs.metadata.uid);
  const active = owned.filter(isActive);
  const want = spec.replicas ?? 1;
  for (let i = active.length; i < want; i++) {
    const pod = podFromTemplate(rs);
    const node = pickNode(store, { tolerations: tolerationsOf(pod), siblings: owned });
    // No room anywhere: try again when a node changes (a real one would wait Pending).
    if (!node) break;
    (pod.spec as { nodeName?: string }).nodeName = node;
    const created = store.create(RES.pods, pod);
    active.push(created);
    owned.push(created);
  }
  for (const extra of active.slice(want).reverse()) {
    tryDelete(store, RES.pods, extra.metadata.namespace, extra.metadata.name ?? '');
  }
  const current = active.slice(0, want);
  const labels = spec.selector?.matchLabels;
  mutateStatus(store, RES.replicasets, rs, (o) => {
    o.status = {
      replicas: current.length,
      fullyLabeledReplicas: current.filter((p) => matchesLabels(p, labels)).length,
      readyReplicas: current.filter(isReady).length,
      availableReplicas: current.filter(isReady).length,
      observedGeneration: rs.metadata.generation ?? 1,
    };
  });
}

export const startReplicaSet: StartController = ({ store, log }, signal) => {
  const reconcile = () => {
    const pods = store.list(RES.pods);
    for (const rs of store.list(RES.replicasets)) {
      if (rs.metadata.deletionTimestamp) continue;
      reconcileReplicaSet(store, rs, pods);
    }
  };
  const loop = createLoop(reconcile, signal, (e) => log?.warn({ err: e }, 'sandbox replicaset controller'));
  watchAll((r, fn) => store.subscribe(r, fn), [RES.pods, RES.replicasets, RES.nodes], loop, signal);
  loop.trigger();
};
