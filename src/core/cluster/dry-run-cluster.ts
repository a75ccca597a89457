// --dry-run for the agent: reads go to the cluster, every write becomes a log line. The record is
// kept in memory (overlaid on the Node it reads) so the state machine still advances and does not
// re-plan on every event.
import type { Logger } from '../../observability/logger.ts';
import type { Cluster } from './cluster.ts';
import type { NodeObject } from './objects.ts';

export function dryRunCluster(inner: Cluster, log: Logger): Cluster {
  const annotations = new Map<string, Map<string, string | null>>();
  const would = (what: string, fields: Record<string, unknown> = {}): void =>
    log.info({ dryRun: true, ...fields }, `dry run: would ${what}`);
  const overlay = (name: string, node: NodeObject): NodeObject => {
    const mine = annotations.get(name);
    if (!mine) return node;
    const merged: Record<string, string> = { ...node.metadata?.annotations };
    for (const [k, v] of mine) {
      if (v === null) delete merged[k];
      else merged[k] = v;
    }
    return { ...node, metadata: { ...node.metadata, annotations: merged } };
  };
  return {
    async getNode(name) {
      const node = await inner.getNode(name);
      return node ? overlay(name, node) : undefined;
    },
    listMaintenances: () => inner.listMaintenances(),
    serverNow: () => inner.serverNow?.(),
    async setNodeAnnotation(node, key, value, _labels, change) {
      const mine = annotations.get(node) ?? new Map<string, string | null>();
      annotations.set(node, mine.set(key, value));
      log.debug({ dryRun: true, node, key }, 'dry run: record kept in memory');
      if (change?.cordon) would('cordon the node', { node });
      if (change?.taint) would(`add taint ${change.taint.key}:${change.taint.effect}`, { node });
      return undefined;
    },
    async setUnschedulable(node, unschedulable) {
      would(unschedulable ? 'cordon the node' : 'uncordon the node', { node });
    },
    async uncordon(node) {
      would('uncordon the node', { node });
      return { done: 'uncordoned' as const };
    },
    async addTaint(node, taint) {
      would(`add taint ${taint.key}:${taint.effect}`, { node });
    },
    async removeTaint(node, key, effect) {
      would(`remove taint ${key}:${effect}`, { node });
    },
    async patchMaintenanceStatus(nm, status) {
      would(`set NodeMaintenance status ${status.phase ?? ''}`, { nodeMaintenance: nm.metadata?.name });
    },
    async addMaintenanceFinalizer(nm, finalizer) {
      would(`add finalizer ${finalizer}`, { nodeMaintenance: nm.metadata?.name });
    },
    async removeMaintenanceFinalizer(nm, finalizer) {
      would(`remove finalizer ${finalizer}`, { nodeMaintenance: nm.metadata?.name });
    },
    async event(ref, type, reason, message) {
      would(`record Event ${reason}`, { object: `${ref.kind}/${ref.name}`, type, message });
    },
    async drain(o) {
      would('drain the pods', { node: o.node });
      return { succeeded: true, evicted: [], ignored: [], failed: [], total: 0 };
    },
  };
}
