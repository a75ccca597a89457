// The World: one snapshot of everything drainer's promises are about, as plain data. Read from the
// live APIs (drainer doctor) or the sandbox (tests); the invariants are pure functions over it.
import type { Deadlines } from '../core/capi/timeouts.ts';
import type { RecordRead } from '../core/record/record.ts';

export interface WorldNode {
  readonly name: string;
  readonly unschedulable: boolean;
  /** The drainer.dev/state annotation as read (absent, ok, unreadable). */
  readonly record: RecordRead;
  readonly annotations: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
}

export interface WorldMaintenance {
  readonly name: string;
  readonly apiVersion: string;
  readonly nodeName: string;
  readonly deleting: boolean;
  /** status.phase (Running, Succeeded, Failed); absent before anyone wrote a status. */
  readonly phase?: string;
  /** The reason of its Evacuated condition (Invalid* marks one drainer refuses). */
  readonly reason?: string;
}

/** A gate pod or PDB in drainer's namespace (label app.kubernetes.io/component=drain-gate). */
export interface WorldGatePod {
  readonly name: string;
  /** The node it is bound to (spec.nodeName). */
  readonly nodeName: string;
  readonly phase?: string;
  readonly ready: boolean;
  readonly deleting: boolean;
  /** It carries drainer's finalizer drainer.dev/gate (only its agent drops it). */
  readonly guarded?: boolean;
}

export interface WorldGatePdb {
  readonly name: string;
  readonly disruptionsAllowed?: number;
  /** status.observedGeneration ≥ metadata.generation: the status is about this spec. */
  readonly observed: boolean;
}

export interface WorldLease {
  readonly name: string;
  /** app.kubernetes.io/component: node-agent (an agent's own Lease) or fleet-slot. */
  readonly component?: string;
  readonly holder?: string;
  readonly renewTime?: string;
  readonly durationSeconds?: number;
}

export interface WorldEvent {
  readonly reason: string;
  readonly type?: string;
  readonly kind: string;
  readonly name: string;
  readonly message: string;
  readonly count: number;
  /** epoch ms of its creation (the API server's clock, whole seconds): when it was first reported. */
  readonly at?: number;
  /** metadata.uid: the object whose stamp `at` is. */
  readonly uid?: string;
}

export interface WorldService {
  readonly host: string;
  readonly status: string;
  readonly disabledReason: string | null;
}

export interface WorldServer {
  readonly id: string;
  readonly name: string;
  /** Its flavor's RAM, where Nova shows it (2.47+). */
  readonly memoryMb?: number;
  /** OS-EXT-SRV-ATTR:host; undefined when Nova does not show it. */
  readonly host?: string;
  readonly status: string;
  /** epoch ms of Nova's `created`: it was on no host before. */
  readonly createdAt?: number;
  /**
   * epoch ms when something other than a migration last put it on a host (an unshelve of an
   * offloaded server: on no host just before), where known (the sandbox; a real Nova's is not read,
   * as it would cost an action-log read per server).
   */
  readonly placedAt?: number;
  /**
   * Its last shelve offload, where known (the sandbox): the host it left, when (epoch ms), and since
   * when it had been there (undefined: since its creation). Where it ran before an unshelve.
   */
  readonly offloaded?: { readonly from: string; readonly at: number; readonly since?: number };
  /** Its metadata, where it was read (drainer's stop mark among it). */
  readonly metadata?: Readonly<Record<string, string>>;
}

export interface WorldMigration {
  readonly id: string;
  readonly serverId: string;
  readonly status: string;
  readonly source: string;
  readonly dest?: string;
  /** Nova's migration_type (live-migration, migration, resize, evacuation), where it says. */
  readonly type?: string;
  /** epoch ms of Nova's updated_at (when the last status was set), if known. */
  readonly updatedAt?: number;
  /** epoch ms of Nova's created_at (when the move was asked for), if known. */
  readonly createdAt?: number;
  /**
   * When the server began to run on the destination, where known (the sandbox): a resize's confirm
   * comes later and moves updated_at on, though the guest ran on the destination from here.
   */
  readonly landedAt?: number;
}

export interface WorldVmi {
  readonly namespace: string;
  readonly name: string;
  readonly node?: string;
  /** spec.evictionStrategy as the VMI states it (absent: the cluster's default). */
  readonly evictionStrategy?: string;
  /** status.phase (Succeeded and Failed: it runs no guest any more). */
  readonly phase?: string;
  /** It is being deleted. */
  readonly deleting?: boolean;
  /** epoch ms it was made (metadata.creationTimestamp; the sandbox knows the exact moment). */
  readonly createdAt?: number;
  readonly uid?: string;
}

/** A VirtualMachine carrying drainer's stop mark (label drainer.dev/stopped). */
export interface WorldVm {
  readonly namespace: string;
  readonly name: string;
  /** The annotation drainer.dev/stopped as written (JSON: node, at, runStrategy, vmi). */
  readonly mark: string;
  /** Its VMI runs (status.ready). */
  readonly running: boolean;
}

/** A VirtualMachineInstanceMigration that ended: where from, where to, and when. */
export interface WorldVmiMove {
  readonly namespace: string;
  readonly vmi: string;
  readonly source?: string;
  readonly target?: string;
  readonly phase?: string;
  /** epoch ms of status.migrationState.endTimestamp. */
  readonly endedAt?: number;
  /** metadata.uid of the VirtualMachineInstanceMigration. */
  readonly uid?: string;
}

/** A power action on a server that Nova accepted (2xx), and whether drainer sent it. */
export interface WorldServerAction {
  readonly serverId: string;
  /** os-stop or os-start. */
  readonly action: string;
  readonly byDrainer: boolean;
  /** epoch ms, Nova's clock. */
  readonly at: number;
}

export interface WorldNova {
  /** nova-compute services only. */
  readonly services: readonly WorldService[];
  readonly servers: readonly WorldServer[];
  readonly migrations: readonly WorldMigration[];
  /**
   * Power actions in the order Nova took them, where the calls to Nova were observed (the sandbox);
   * undefined for a real cloud, whose rules about them then say nothing.
   */
  readonly powerActions?: readonly WorldServerAction[];
  /**
   * The moves asked of Nova that it accepted (migrate, resize, confirmResize, revertResize,
   * os-migrateLive), in its order, where the calls were observed; undefined for a real cloud.
   */
  readonly moveActions?: readonly WorldServerAction[];
}

/** One request the Kubernetes API server answered (the sandbox keeps a bounded log of them). */
export interface ObservedRequest {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly status: number;
  /** epoch ms on the same clock as Nova's and KubeVirt's timestamps. */
  readonly at: number;
  readonly userAgent?: string;
  /** An admitted delete or eviction of a pod that finalizers keep (not gone yet: a drain waits). */
  readonly heldBy?: readonly string[];
  /**
   * The request took the pod away for good (a delete or eviction nothing held, or the PATCH or PUT
   * that dropped its last finalizer): from this moment a drain waiting for it goes on.
   */
  readonly removed?: boolean;
  /** The node the pod was bound to when the request came (pod requests only). */
  readonly podNode?: string;
  /** A 422 to a JSON patch whose `test` op failed: the writer's guard saw someone write first. */
  readonly guardFailed?: boolean;
}

/**
 * An operator's `drainer release` of a node's gate, for the maintenance it was given in: from its
 * moment until that maintenance ended (the node's record gone or replaced); no end while it lasts.
 * epoch ms on the clock of ObservedRequest.at.
 */
export interface ObservedRelease {
  readonly node: string;
  readonly from: number;
  readonly until?: number;
}

export interface Observations {
  readonly requests?: readonly ObservedRequest[];
  /** The agents' log lines (pino JSON, one object per line). */
  readonly logLines?: readonly string[];
  /** Per node, the text of its agent's /metrics. */
  readonly metrics?: Readonly<Record<string, string>>;
  /**
   * Every operator release seen (the soak records them as it issues them). When given, a release
   * excuses only the gate removals in its own span; without it, any DrainGateReleased Event does.
   */
  readonly releases?: readonly ObservedRelease[];
  /** What the VMs' owners did to their servers (the soak's owners record it as they act). */
  readonly ownerActions?: readonly ObservedOwnerAction[];
  /** Every power change of a server (stopped, running again), with who caused it. */
  readonly powerChanges?: readonly ObservedPowerChange[];
  /** The fleet queue as the API server saw it (who queued when, who held which slot when). */
  readonly queue?: ObservedQueue;
}

/**
 * The fleet queue on the API server's clock (epoch ms, the clock of ObservedRequest.at): each span a
 * node carried drainer.dev/queued, each span a node held a slot Lease.
 */
export interface ObservedQueue {
  /** from: the node's place (a label put back with its old value keeps it); since: when this stay began. */
  readonly queued: readonly (ObservedSpan & { readonly since?: number })[];
  /** renewedAt: the holder's last write to it (a renewal) before `until`. */
  readonly slots: readonly (ObservedSpan & { readonly slot: string; readonly renewedAt?: number })[];
  /**
   * How long a free slot waits for the nodes ahead before a waiter behind them takes it (they are
   * taken for gone: fleet.leaseDuration), on the same clock.
   */
  readonly staleMs: number;
  /**
   * One second of the Date header the agents learn the API server's time from, on this record's
   * clock (default 1000): the soak's clock runs SCALE times the API server's Date, so it is longer.
   */
  readonly resolutionMs?: number;
}

/** From `from` until `until` (absent: still). */
export interface ObservedSpan {
  readonly node: string;
  readonly from: number;
  readonly until?: number;
}

/** An owner's action on its server that Nova accepted. */
export interface ObservedOwnerAction {
  readonly serverId: string;
  readonly name: string;
  /** stop, start, shelve, unshelve, delete, resize, policy, notify-move. */
  readonly action: string;
  /** epoch ms on the clock of ObservedRequest.at. */
  readonly at: number;
  /** Its host when the owner acted. */
  readonly host?: string;
  /** The new way out, for a policy change. */
  readonly detail?: string;
  /** When the maintenance its host was in ended (absent: it lasts, or the host was in service). */
  readonly until?: number;
}

/** A server seen stopped or running again, and whose doing it was (its owner asked, or else drainer). */
export interface ObservedPowerChange {
  readonly serverId: string;
  readonly name: string;
  readonly to: 'stopped' | 'running';
  readonly by: 'owner' | 'drainer';
  readonly at: number;
  readonly host?: string;
}

export interface World {
  /** When it was read (the reader's clock). */
  readonly at: Date;
  readonly nodes: readonly WorldNode[];
  readonly maintenances: readonly WorldMaintenance[];
  readonly gatePods: readonly WorldGatePod[];
  readonly gatePdbs: readonly WorldGatePdb[];
  /** Leases in drainer's namespace; undefined when they could not be read (no rights). */
  readonly leases?: readonly WorldLease[];
  readonly events: readonly WorldEvent[];
  /** Undefined when no cloud was looked at (nova disabled or not configured). */
  readonly nova?: WorldNova;
  readonly vmis?: readonly WorldVmi[];
  readonly vmiMoves?: readonly WorldVmiMove[];
  /** VirtualMachines carrying drainer's stop mark; undefined when not read. */
  readonly vms?: readonly WorldVm[];
  /** Cluster API Machines (core/capi); undefined where Cluster API is not installed or not readable. */
  readonly machines?: readonly WorldMachine[];
  /** Karpenter NodePools; undefined where Karpenter is not installed or not readable. */
  readonly nodePools?: readonly WorldNodePool[];
  /** The DaemonSets in drainer's namespace (its agents'); undefined when not read. */
  readonly daemonSets?: readonly WorldDaemonSet[];
  readonly observations?: Observations;
}

/** A Cluster API Machine: its node (status.nodeRef), deletion and drainer's pre-drain hook on it. */
export interface WorldMachine {
  readonly namespace: string;
  readonly name: string;
  readonly node?: string;
  readonly deleting: boolean;
  /** drainer's pre-drain hook annotation is on it. */
  readonly hooked: boolean;
  /** spec.nodeDrainTimeout in seconds (Cluster API copies it from the MachineSet's template). */
  readonly drainTimeoutSeconds?: number;
}

/** A Karpenter NodePool and its terminationGracePeriod (seconds), where set. */
export interface WorldNodePool {
  readonly name: string;
  readonly terminationGracePeriodSeconds?: number;
}

/** A DaemonSet and where it places its pods (nodeSelector, required node affinity). */
export interface WorldDaemonSet {
  readonly name: string;
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (any one term matches). */
  readonly nodeSelectorTerms?: readonly WorldSelectorTerm[];
  readonly deleting?: boolean;
}

export interface WorldSelectorTerm {
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }[];
}

/** What the checks need to know of the configuration. */
export interface CheckOptions {
  /** nova.disabledReasonPrefix (default "drainer:"). */
  readonly disabledReasonPrefix: string;
  /** fleet.maxConcurrentEvacuations resolved to a number of nodes (0: no limit). */
  readonly budget: number;
  /** drainer's namespace (gate objects, Leases). */
  readonly namespace: string;
  /** Is the drain gate enabled (drainGate.enabled)? */
  readonly gate: boolean;
  /** Does drainer own NodeMaintenances (nodeMaintenance.mode own)? */
  readonly ownsMaintenances: boolean;
  /** fleet.agentLeaseDuration, seconds: an agent Lease not renewed for this long (plus slack) is dead. */
  readonly agentLeaseDuration: number;
  /** Clock difference tolerated when judging a remote renewTime (seconds). Default 30. */
  readonly clockSlackSeconds?: number;
  /** nova.hostMapping: node name → service host, where they differ. */
  readonly hostMapping?: Readonly<Record<string, string>>;
  /** 4xx codes expected on top of the default ones (see rules/requests.ts). */
  readonly expected4xx?: readonly number[];
  /** drainer's per-VM deadlines (the fleet tools' timeouts are compared with them); absent: not compared. */
  readonly deadlines?: Deadlines;
  /** For logind's time against each node's evacuation (shutdown.*); absent: not compared. */
  readonly shutdown?: { readonly rateMiBps: number; readonly atOnce: number; readonly marginSeconds: number };
}
