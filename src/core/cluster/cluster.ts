// The Kubernetes operations the reconciler needs, as one narrow port. The real one
// (kube-cluster.ts) calls src/kube; tests may pass an in-memory one. Keeps the state machine
// free of HTTP details.
import type { EventReason } from '../../kube/events.ts';
import type { UncordonResult } from '../../kube/node-uncordon.ts';
import type { Logger } from '../../observability/logger.ts';
import type { MaintenanceObject, MaintenanceStatus, NodeObject, ObjectRef, Taint } from './objects.ts';

/** The event catalogue lives with the recorder (src/kube/events.ts). */
export type { EventReason, UncordonResult };

export interface PodId {
  readonly namespace: string;
  readonly name: string;
}

export interface DrainOutcome {
  readonly succeeded: boolean;
  readonly evicted: readonly PodId[];
  readonly ignored: readonly { pod: PodId; reason: string }[];
  readonly failed: readonly { pod: PodId; reason: string }[];
  readonly total: number;
}

export interface DrainProgress {
  readonly total: number;
  readonly evicted: number;
  readonly pending: readonly PodId[];
}

/** A change to the Node made in the same write as the record that says so. */
export interface NodeChange {
  readonly cordon?: true;
  readonly taint?: Taint;
}

export interface Cluster {
  /**
   * The API server's time now, as its answers tell it (their Date headers): the fleet queue's
   * order, the same for every agent whatever its own clock says. Undefined before any answer.
   */
  serverNow?(): Date | undefined;
  /** The Node, or undefined when it does not exist. */
  getNode(name: string): Promise<NodeObject | undefined>;
  /** NodeMaintenances of every installed group. */
  listMaintenances(): Promise<MaintenanceObject[]>;
  /**
   * Sets (null: removes) the annotation, and changes `labels` in the same write; with `change`,
   * also cordons and/or adds the taint in that one write, so the record of a change and the change
   * land together or not at all. With `guard`, only on that resourceVersion of the Node (else
   * ConflictError). Answers the Node's new resourceVersion (undefined when there is none, dry run).
   */
  setNodeAnnotation(
    node: string,
    key: string,
    value: string | null,
    labels?: Record<string, string | null>,
    change?: NodeChange,
    guard?: { resourceVersion: string },
  ): Promise<string | undefined>;
  setUnschedulable(node: string, unschedulable: boolean): Promise<void>;
  /**
   * Takes off the cordon drainer made, only if it has stood since the Node's version `since` (the
   * read the restore decided on): a cordon lifted and put back since is someone else's, and stays.
   */
  uncordon(node: string, since: string | undefined): Promise<UncordonResult>;
  addTaint(node: string, taint: Taint): Promise<void>;
  removeTaint(node: string, key: string, effect: string): Promise<void>;
  /** Merge-patches status; with guard, only when the object is still at that resourceVersion (else ConflictError). */
  patchMaintenanceStatus(
    nm: MaintenanceObject,
    status: MaintenanceStatus,
    guard?: { resourceVersion: string },
  ): Promise<void>;
  /** Adds the finalizer and the annotations in one write. */
  addMaintenanceFinalizer(
    nm: MaintenanceObject,
    finalizer: string,
    annotations: Record<string, string>,
  ): Promise<void>;
  removeMaintenanceFinalizer(nm: MaintenanceObject, finalizer: string): Promise<void>;
  event(ref: ObjectRef, type: 'Normal' | 'Warning', reason: EventReason, message: string): Promise<void>;
  drain(opts: {
    node: string;
    skipPod?: (pod: PodId) => string | undefined;
    signal: AbortSignal;
    log: Logger;
    /** Where EvictionBlocked Events go besides the pod (the Node). */
    involved: readonly ObjectRef[];
    onProgress?: (p: DrainProgress) => void;
  }): Promise<DrainOutcome>;
}
