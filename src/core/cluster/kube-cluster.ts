// The reconciler's Cluster port over src/kube: node ops, NodeMaintenances of both groups,
// aggregated Events and the kubectl-style pod drain.
import type { DrainConfig } from '../../config/schema.ts';
import type { KubeClients } from '../../kube/client.ts';
import { drainNode } from '../../kube/drain.ts';
import type { EventSink } from '../../kube/events.ts';
import {
  addNodeMaintenanceFinalizer,
  listNodeMaintenances,
  patchNodeMaintenanceStatus,
  removeNodeMaintenanceFinalizer,
} from '../../kube/maintenance.ts';
import {
  addTaint,
  getNode,
  removeTaint,
  setAnnotation,
  setAnnotationWith,
  setUnschedulable,
} from '../../kube/node.ts';
import { uncordonOurs } from '../../kube/node-uncordon.ts';
import type { KubeNode, NodeMaintenance } from '../../kube/types.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Cluster } from './cluster.ts';
import { isNotFoundError } from '../../errors.ts';
import type { MaintenanceObject } from './objects.ts';

/** The core reads these objects structurally; src/kube wants its own (wider) JSON shape. */
const asKube = (nm: MaintenanceObject): NodeMaintenance => nm as unknown as NodeMaintenance;

export function kubeCluster(opts: {
  k: KubeClients;
  events: EventSink;
  drain: DrainConfig;
  log: Logger;
  /** drainer_evictions_total{code} */
  onEviction?: (code: string) => void;
}): Cluster {
  const { k, events, log } = opts;
  // The newest Node this port read or wrote: a write that changes the node starts from it instead
  // of a read (a stale one costs a 409 and a read, as a read would have cost anyway).
  const seen = new Map<string, KubeNode>();
  const keep = (node: KubeNode): KubeNode => {
    if (node.metadata.name) seen.set(node.metadata.name, node);
    return node;
  };
  return {
    serverNow: () => k.serverNow?.(),
    async getNode(name) {
      try {
        return keep(await getNode(k, name));
      } catch (err) {
        if (isNotFoundError(err)) return undefined;
        throw err;
      }
    },
    async listMaintenances() {
      return (await listNodeMaintenances(k, { log })).items;
    },
    async setNodeAnnotation(node, key, value, labels, change, guard) {
      const resourceVersion = guard?.resourceVersion;
      if (!change?.cordon && !change?.taint) {
        const opts = { ...(labels ? { labels } : {}), ...(resourceVersion ? { resourceVersion } : {}) };
        return keep(await setAnnotation(k, node, key, value, opts)).metadata.resourceVersion;
      }
      const known = seen.get(node);
      const written = await setAnnotationWith(k, node, key, value, {
        ...(labels ? { labels } : {}),
        ...(change.cordon ? { cordon: true } : {}),
        ...(change.taint ? { taint: { ...change.taint } } : {}),
        ...(known ? { known } : {}),
        ...(resourceVersion ? { resourceVersion } : {}),
      });
      return keep(written).metadata.resourceVersion;
    },
    async setUnschedulable(node, unschedulable) {
      keep(await setUnschedulable(k, node, unschedulable));
    },
    async uncordon(node, since) {
      seen.delete(node);
      return uncordonOurs(k, node, since);
    },
    async addTaint(node, taint) {
      seen.delete(node);
      await addTaint(k, node, { ...taint });
    },
    async removeTaint(node, key, effect) {
      seen.delete(node);
      await removeTaint(k, node, key, effect);
    },
    async patchMaintenanceStatus(nm, status, guard) {
      await patchNodeMaintenanceStatus(k, asKube(nm), { ...status } as NodeMaintenance['status'] & object, {
        resourceVersion: guard ? guard.resourceVersion : null,
      });
    },
    async addMaintenanceFinalizer(nm, finalizer, annotations) {
      await addNodeMaintenanceFinalizer(k, asKube(nm), finalizer, annotations);
    },
    async removeMaintenanceFinalizer(nm, finalizer) {
      await removeNodeMaintenanceFinalizer(k, asKube(nm), finalizer);
    },
    event(ref, type, reason, message) {
      return events.record(ref, type, reason, message);
    },
    drain(o) {
      return drainNode(k, {
        node: o.node,
        config: opts.drain,
        signal: o.signal,
        log: o.log,
        events,
        involved: o.involved,
        skipPod: o.skipPod
          ? (pod) =>
              o.skipPod?.({ namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '' })
          : undefined,
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
        ...(opts.onEviction ? { onEviction: opts.onEviction } : {}),
      });
    },
  };
}
