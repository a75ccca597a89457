// The few fields of Kubernetes objects the core reads. Structural, so client-node's V1Node and the
// plain JSON of custom objects both fit without conversions.
import type { ObjectRef } from '../../kube/types.ts';

export interface Taint {
  readonly key: string;
  readonly effect: string;
  readonly value?: string;
}

export interface ObjectMeta {
  readonly name?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string | Date;
  readonly deletionTimestamp?: string | Date;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
}

export interface NodeObject {
  readonly metadata?: ObjectMeta;
  readonly spec?: { readonly unschedulable?: boolean; readonly taints?: readonly Taint[] };
}

export interface MaintenanceStatus {
  /** Running, Succeeded or Failed (others may write other values). */
  readonly phase?: string;
  readonly drainProgress?: number;
  readonly lastUpdate?: string;
  readonly lastError?: string;
  readonly pendingPods?: readonly string[];
  readonly totalpods?: number;
  readonly evictionPods?: number;
  readonly conditions?: readonly Record<string, unknown>[];
}

/** A NodeMaintenance of either API group (nodemaintenance.medik8s.io or the legacy kubevirt.io). */
export interface MaintenanceObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
  readonly spec?: { readonly nodeName?: string; readonly reason?: string };
  readonly status?: MaintenanceStatus;
}

/** What an Event is about: the same reference src/kube's recorder takes. */
export type { ObjectRef };

export const nodeRef = (node: NodeObject, name: string): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Node',
  name,
  ...(node.metadata?.uid ? { uid: node.metadata.uid } : {}),
});

export const maintenanceRef = (nm: MaintenanceObject): ObjectRef => ({
  apiVersion: nm.apiVersion ?? 'nodemaintenance.medik8s.io/v1beta1',
  kind: 'NodeMaintenance',
  name: nm.metadata?.name ?? '',
  ...(nm.metadata?.uid ? { uid: nm.metadata.uid } : {}),
});

export const timeOf = (t: string | Date | undefined): number =>
  t === undefined ? 0 : t instanceof Date ? t.getTime() : Date.parse(t) || 0;
