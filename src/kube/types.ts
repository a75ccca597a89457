// Plain-JSON shapes of the Kubernetes objects this folder reads and writes. Every request here
// speaks raw JSON (timestamps stay strings), so watches, gets and patches hand out the same shapes.

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [field: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** Any Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface Taint {
  key: string;
  effect: string;
  value?: string;
  timeAdded?: string;
}

export interface KubeNode extends KubeObject {
  spec?: { unschedulable?: boolean; taints?: Taint[]; [field: string]: unknown };
}

export interface KubePod extends KubeObject {
  spec?: {
    nodeName?: string;
    terminationGracePeriodSeconds?: number;
    volumes?: { name: string; emptyDir?: unknown; [field: string]: unknown }[];
    [field: string]: unknown;
  };
  status?: { phase?: string; [field: string]: unknown };
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** meta/v1 Status, as the API server answers errors. */
export interface KubeStatus {
  kind?: 'Status';
  status?: 'Success' | 'Failure';
  code?: number;
  reason?: string;
  message?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
    retryAfterSeconds?: number;
  };
}

export interface NodeMaintenanceStatus {
  /** Running, Succeeded or Failed. */
  phase?: string;
  drainProgress?: number;
  lastUpdate?: string;
  lastError?: string;
  pendingPods?: string[];
  totalpods?: number;
  evictionPods?: number;
  conditions?: Record<string, unknown>[];
  [field: string]: unknown;
}

export interface NodeMaintenance extends KubeObject {
  spec?: { nodeName?: string; reason?: string; [field: string]: unknown };
  status?: NodeMaintenanceStatus;
}

/** What an Event is about (core/cluster/objects.ts re-exports it). */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid?: string;
  readonly namespace?: string;
}

export interface PodRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

export const podRef = (pod: KubeObject): PodRef => ({
  namespace: pod.metadata.namespace ?? 'default',
  name: pod.metadata.name ?? '',
  ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}),
});

export const podKey = (p: PodRef): string => `${p.namespace}/${p.name}`;
