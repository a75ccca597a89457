// What one reconcile of one node works with, passed to the evacuate/restore steps.
import type { Config } from '../config/schema.ts';
import type { Logger } from '../observability/logger.ts';
import type { Cluster, EventReason } from './cluster.ts';
import type { MaintenanceObject, NodeObject, ObjectRef } from './objects.ts';
import type { EvacuateOptions, HostOutcome, RestoreOptions, RestoreResult } from './host.ts';
import type { NodeRef, Plan, PlanOptions } from './plugin.ts';
import type { NodeRecordStore, Phase } from './record.ts';
import type { EvacuationBudget } from './fleet/types.ts';

/** The plugin host as the reconciler uses it (src/core/host.ts PluginHost fits). */
export interface EvacuationHost {
  plan(node: NodeRef, signal: AbortSignal, opts?: PlanOptions): Promise<Plan[]>;
  evacuate(node: NodeRef, opts: EvacuateOptions): Promise<HostOutcome[]>;
  restore(node: NodeRef, opts: RestoreOptions): Promise<RestoreResult[]>;
}

/** The few metrics the reconciler reports (the daemon maps them onto observability/metrics). */
export interface ReconcilerMetrics {
  evacuationFinished(result: 'succeeded' | 'failed' | 'cancelled', seconds: number): void;
  phase(phase: Phase | undefined): void;
  /** A node got its fleet slot after waiting this long. */
  queueFinished?(seconds: number): void;
  fleetSlots?(taken: number, total: number): void;
}

export type ReconcilerConfig = Pick<
  Config,
  'evacuation' | 'drain' | 'nodeMaintenance' | 'dryRun' | 'resyncInterval'
>;

export type { EvacuationBudget } from './fleet/types.ts';

export interface ReconcilerDeps {
  readonly cluster: Cluster;
  readonly host: EvacuationHost;
  readonly config: ReconcilerConfig;
  readonly log: Logger;
  readonly metrics?: ReconcilerMetrics;
  /** The cluster-wide evacuation budget; absent: no limit (fleet.maxConcurrentEvacuations 0). */
  readonly budget?: EvacuationBudget;
  readonly now?: () => Date;
}

export interface NodeRun {
  readonly deps: ReconcilerDeps;
  readonly nodeName: string;
  readonly node: NodeObject;
  readonly maintenances: readonly MaintenanceObject[];
  readonly store: NodeRecordStore;
  readonly log: Logger;
  /** Shutdown of the agent. */
  readonly signal: AbortSignal;
  readonly ref: ObjectRef;
  now(): Date;
  /** Records an Event; failures are logged, never thrown (an Event is never worth failing for). */
  event(type: 'Normal' | 'Warning', reason: EventReason, message: string, also?: ObjectRef): Promise<void>;
}
