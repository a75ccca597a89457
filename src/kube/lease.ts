// Fleet slots as coordination.k8s.io/v1 Leases, and the queued Nodes (by the label the record
// write sets). Writes of a Lease carry the resourceVersion they read: a 409 ConflictError means
// another agent won.
import type { KubeTransport } from './http.ts';
import type { KubeList, KubeNode, KubeObject } from './types.ts';

import { QUEUED_LABEL } from '../names.ts';

export { QUEUED_LABEL };

export interface KubeLease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export const leasesPath = (namespace: string): string =>
  `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;

/**
 * The Lease as kube-apiserver takes it: leaseDurationSeconds is an int32 greater than 0 (a 400 for
 * 1.5, a 422 for 0), so a duration configured in fractions of a second is written rounded up.
 */
const wire = (lease: KubeLease): KubeLease & { apiVersion: string; kind: string } => {
  const d = lease.spec?.leaseDurationSeconds;
  const spec =
    d === undefined ? lease.spec : { ...lease.spec, leaseDurationSeconds: Math.max(1, Math.ceil(d)) };
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease, ...(spec ? { spec } : {}) };
};

export function createLease(k: KubeTransport, namespace: string, lease: KubeLease): Promise<KubeLease> {
  return k.request<KubeLease>({ method: 'POST', path: leasesPath(namespace), body: wire(lease) });
}

export function getLease(k: KubeTransport, namespace: string, name: string): Promise<KubeLease> {
  return k.request<KubeLease>({ path: `${leasesPath(namespace)}/${encodeURIComponent(name)}` });
}

/** PUT with the resourceVersion in `lease.metadata`: optimistic concurrency. */
export function replaceLease(k: KubeTransport, namespace: string, lease: KubeLease): Promise<KubeLease> {
  const name = lease.metadata.name ?? '';
  return k.request<KubeLease>({
    method: 'PUT',
    path: `${leasesPath(namespace)}/${encodeURIComponent(name)}`,
    body: wire(lease),
  });
}

/** The Leases of one kind (label selector), e.g. every node's agent Lease for `drainer status`. */
export async function listLeases(
  k: KubeTransport,
  namespace: string,
  labelSelector: string,
): Promise<KubeLease[]> {
  const list = await k.request<KubeList<KubeLease>>({
    path: leasesPath(namespace),
    query: { labelSelector },
  });
  return list.items;
}

/** The queued Nodes only (label selector): never a list of every node. */
export async function listQueuedNodes(k: KubeTransport): Promise<KubeNode[]> {
  return (await listQueuedPage(k, {})).items;
}

/**
 * The queued Nodes, optionally only those queued after `after` and before `before` (the label holds
 * the queued time in ms; the API server's `<` and `>` selectors compare it as an integer). With a
 * `limit` the API server reads etcd only until the page is full; `cached` reads the API server's
 * watch cache instead (resourceVersion=0: no etcd read, the selector filtered in memory, no paging).
 */
export async function listQueuedPage(
  k: KubeTransport,
  o: { after?: number; before?: number; limit?: number; cached?: boolean },
): Promise<KubeList<KubeNode>> {
  const terms = [
    ...(o.after !== undefined ? [`${QUEUED_LABEL}>${o.after}`] : []),
    ...(o.before !== undefined ? [`${QUEUED_LABEL}<${o.before}`] : []),
  ];
  return k.request<KubeList<KubeNode>>({
    path: '/api/v1/nodes',
    query: {
      labelSelector: terms.length ? terms.join(',') : QUEUED_LABEL,
      ...(o.cached ? { resourceVersion: '0' } : {}),
      ...(o.limit ? { limit: String(o.limit) } : {}),
    },
  });
}

/** How many nodes run the agent: the DaemonSet's desiredNumberScheduled (one GET). */
export async function agentCount(k: KubeTransport, namespace: string, daemonSet: string): Promise<number> {
  const ds = await k.request<KubeObject & { status?: { desiredNumberScheduled?: number } }>({
    path: `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/daemonsets/${encodeURIComponent(daemonSet)}`,
  });
  return ds.status?.desiredNumberScheduled ?? 0;
}
