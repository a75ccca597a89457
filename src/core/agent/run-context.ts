// What one reconcile of one node works with, passed to the evacuate/restore steps.
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Cluster, EventReason } from '../cluster/cluster.ts';
import type { MaintenanceObject, NodeObject, ObjectRef } from '../cluster/objects.ts';
import type {
  EvacuateOptions,
  HostOutcome,
  RestoreOptions,
  RestoreResult,
  StrandedResult,
} from '../backends/host.ts';
import type { NodeRef, Plan, PlanOptions, StrandedOptions } from '../backends/plugin.ts';
import type { NodeRecordStore, Phase } from '../record/record.ts';
import type { EvacuationBudget, GateState, StartGate, WaitKind } from '../fleet/types.ts';
import type { DrainGate } from '../gate/gate.ts';

/** The plugin host as the reconciler uses it (src/core/backends/host.ts PluginHost fits). */
export interface EvacuationHost {
  plan(node: NodeRef, signal: AbortSignal, opts?: PlanOptions): Promise<Plan[]>;
  evacuate(node: NodeRef, opts: EvacuateOptions): Promise<HostOutcome[]>;
  restore(node: NodeRef, opts: RestoreOptions): Promise<RestoreResult[]>;
  /** Changes of drainer's with no record to own them (optional: hosts without such plugins have none). */
  stranded?(node: NodeRef, opts: StrandedOptions): Promise<StrandedResult>;
}

/** The few metrics the reconciler reports (the daemon maps them onto observability/metrics). */
export interface ReconcilerMetrics {
  evacuationFinished(result: 'succeeded' | 'failed' | 'cancelled', seconds: number): void;
  phase(phase: Phase | undefined): void;
  /** A node got its fleet slot after waiting this long. */
  queueFinished?(seconds: number): void;
  fleetSlots?(taken: number, total: number): void;
  /** The start gate's fleet-wide picture (windows, freezes, blockers). */
  gate?(s: GateState, waiting: WaitKind | undefined): void;
  /** The node's record cannot be read (true) or can again (false). */
  recordUnreadable?(unreadable: boolean): void;
}

export type ReconcilerConfig = Pick<
  Config,
  'evacuation' | 'drain' | 'nodeMaintenance' | 'dryRun' | 'resyncInterval'
> &
  Partial<Pick<Config, 'triggers' | 'drainGate' | 'strandedCheckInterval'>>;

export type { EvacuationBudget } from '../fleet/types.ts';

export interface ReconcilerDeps {
  readonly cluster: Cluster;
  readonly host: EvacuationHost;
  readonly config: ReconcilerConfig;
  readonly log: Logger;
  readonly metrics?: ReconcilerMetrics;
  /** The cluster-wide evacuation budget; absent: no limit (fleet.maxConcurrentEvacuations 0). */
  readonly budget?: EvacuationBudget;
  /** Windows, freezes and blockers; absent: any time. */
  readonly startGate?: StartGate;
  /** The node's drain gate (drainGate.enabled); absent: drains are not held. */
  readonly gate?: DrainGate;
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
  /** While an evacuation runs: the Node and NodeMaintenances as the agent's watches last saw them. */
  readonly live?: LiveView;
  now(): Date;
  /** Records an Event; failures are logged, never thrown (an Event is never worth failing for). */
  event(type: 'Normal' | 'Warning', reason: EventReason, message: string, also?: ObjectRef): Promise<void>;
}

export interface LiveView {
  node(): NodeObject;
  maintenances(): readonly MaintenanceObject[];
  /** Sleeps ms, or less when the Node or a NodeMaintenance changed, or the signal aborted. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}
