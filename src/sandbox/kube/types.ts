// Shapes shared by the sandbox API server's parts: objects, Status, and the error that carries one.

/** Any Kubernetes object as JSON. The store never mutates an object once stored. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
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
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  [field: string]: unknown;
}

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** meta/v1 Status, as the API server answers errors (and some successes). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  code: number;
}

/** Thrown by the store and the handlers; the HTTP layer answers `status` as is. */
export class StatusError extends Error {
  readonly status: Status;
  constructor(status: Status) {
    super(status.message ?? status.reason ?? `status ${status.code}`);
    this.name = 'StatusError';
    this.status = status;
  }
  get code(): number {
    return this.status.code;
  }
}

export const isStatusError = (e: unknown): e is StatusError => e instanceof StatusError;

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Options of a DELETE (meta/v1 DeleteOptions, the parts the sandbox honours). */
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  /** The deprecated form of propagationPolicy Orphan (kubectl's protobuf body may carry it). */
  orphanDependents?: boolean;
  dryRun?: string[];
}
