// The backend contract. Keep it this small: the host (src/core) adds records, deadlines,
// metrics, Events and retries around it, so a backend carries none of those.
import type { Logger } from '../../observability/logger.ts';

/** The Kubernetes node being evacuated. */
export interface NodeRef {
  readonly name: string;
  /** drainer.dev/migration-mode=manual: someone else moves the VMs; the plugin only waits for that. */
  readonly mode?: 'manual';
  /** drainer.dev/reboot=true: the maintenance is a reboot, so a VM stopped on the host may stay. */
  readonly reboot?: boolean;
  /**
   * Restore only: the node is still to be evacuated (cordoned by someone else, a NodeMaintenance, a
   * trigger taint), e.g. `drainer restore --force` before the uncordon, while a drain may run. The
   * host takes nothing back from the plugin: a VM drainer stopped there stays stopped, marked, for
   * the restore after the uncordon to start.
   */
  readonly inMaintenance?: boolean;
}

/** What a plugin will do with one workload (a Nova server, a KubeVirt VMI). */
export type PlannedAction =
  | 'live-migrate'
  | 'cold-migrate'
  | 'confirm-resize'
  | 'shutdown' // left to the pod drain, which stops it
  | 'external' // someone else moves it
  | 'skip' // left where it is by policy
  | 'stop' // stopped where it is (its owner's way out; the maintenance is a reboot)
  | 'notify' // its owner is asked to move it; after a timeout it takes the default way
  | 'none'; // blocked: see `blocker`

/**
 * Is a VM on its host though not running ('stopped': a reboot harms no guest, yet its disk and its
 * place are there), or not on the host at all ('gone': offloaded, deleted)? Absent: on it, running.
 * The plugins set it from src/plugins/on-host.ts; src/core/backends/vm-count.ts counts it.
 */
export type Presence = 'stopped' | 'gone';

export interface PlannedWorkload {
  readonly id: string;
  readonly name: string;
  /** Nova project id, Kubernetes namespace. */
  readonly owner: string;
  /** Backend state as the backend calls it (ACTIVE, SHUTOFF, Running …). */
  readonly state: string;
  readonly action: PlannedAction;
  /** Why it cannot move (set only when action is 'none'). */
  readonly blocker?: string;
  /** Why this way out: the default, its owner's choice (e.g. Nova metadata), a node or config policy. */
  readonly why?: string;
  readonly presence?: Presence;
  /** The VM's memory (Nova: its flavor's RAM), for the estimate of how long moving it takes; absent when unknown. */
  readonly memoryBytes?: number;
}

/**
 * Does everything that must move fit on the other hosts (read-only, like the plan)?
 * `short`: it does not, the message names the shortfall. `unknown`: the check could not run
 * (`unavailable`: its API failed; `unsupported`: the cloud has nothing to ask, e.g. no Placement).
 */
export type CapacityVerdict =
  | { readonly status: 'fits'; readonly message: string }
  | { readonly status: 'short'; readonly message: string }
  | { readonly status: 'unknown'; readonly reason: 'unavailable' | 'unsupported'; readonly message: string };

/**
 * Something that stops the whole evacuation, not one workload (those carry `blocker`): the core
 * refuses before its first change. `missing-rights`: the credentials cannot see what drainer must
 * see to tell a moved workload from one that stayed (e.g. Nova's host attribute).
 */
export interface PlanBlocker {
  /** `invalid-policy`: a workload names a way out that does not exist (its owner's typo). */
  readonly kind: 'missing-rights' | 'invalid-policy';
  /** Names what is missing and how to grant it. */
  readonly message: string;
}

export interface Plan {
  readonly plugin: string;
  /** Where the workloads live, as the backend names it (nova: the service host). */
  readonly location?: string;
  readonly workloads: readonly PlannedWorkload[];
  /** Set by a plugin that can check capacity; absent means nothing to check. */
  readonly capacity?: CapacityVerdict;
  /** Plan-wide blockers (absent or empty: none). */
  readonly blockers?: readonly PlanBlocker[];
}

export type WorkloadState = 'pending' | 'migrating' | 'succeeded' | 'failed' | 'blocked' | 'skipped';

/** Progress of one workload; also its final line in the Outcome. */
/** A live migration's copy as the cloud counts it (read only for migrations that run long). */
export interface CopyProgress {
  readonly totalBytes: number;
  readonly remainingBytes: number;
  /** False once what is left has stopped falling (the plugin's stall window). */
  readonly converging: boolean;
  /** What was done about the stall: forced to complete, aborted, or only reported. */
  readonly stallAction?: 'force-complete' | 'abort' | 'wait';
}

export interface WorkloadProgress {
  readonly id: string;
  readonly name: string;
  readonly state: WorkloadState;
  readonly action: PlannedAction;
  readonly source?: string;
  readonly target?: string;
  readonly attempts: number;
  readonly startedAt?: string;
  readonly durationMs?: number;
  readonly message?: string;
  /** Who owns the workload (Nova: the server's project), for Events that tell the tenant. */
  readonly owner?: string;
  readonly copy?: CopyProgress;
  /** The VM's memory (Nova: its flavor's RAM), for the memory left to move; absent when unknown. */
  readonly memoryBytes?: number;
  /** As the plan's; a `succeeded` workload has left the host whatever this says. */
  readonly presence?: Presence;
}

export interface Outcome {
  readonly plugin: string;
  /** True when every workload that had to move did move. */
  readonly succeeded: boolean;
  readonly workloads: readonly WorkloadProgress[];
  /** Pods the plugin takes care of (e.g. virt-launcher pods of migrated VMIs): the pod drain leaves them alone. */
  readonly handledPods?: readonly { namespace: string; name: string }[];
  readonly message?: string;
}

/** A plugin's own small piece of the Node record (JSON-serialisable). */
export type PluginRecord = Readonly<Record<string, unknown>>;

export interface EvacuationContext {
  readonly log: Logger;
  /** Aborted on uncordon (cancel) or shutdown: stop starting new work and return. */
  readonly signal: AbortSignal;
  readonly deadline: Date;
  /** Why we evacuate: "cordon", "NodeMaintenance/<name>", "run-once". Goes into disabled reasons. */
  readonly trigger: string;
  readonly dryRun: boolean;
  /** When the cancel was asked for: abort in-flight migrations instead of letting them finish. */
  readonly abortOnCancel: boolean;
  progress(items: readonly WorkloadProgress[]): void;
  /** What this plugin saved before (a resumed evacuation), or undefined. */
  readonly record: PluginRecord | undefined;
  /** Persist the plugin's record before acting on it (the host writes it to the Node). */
  save(record: PluginRecord): Promise<void>;
}

export interface RestoreContext {
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly dryRun: boolean;
  readonly record: PluginRecord | undefined;
  save(record: PluginRecord): Promise<void>;
}

/** A change of drainer's found with no record to own it (core/restore/stranded.ts), and what was done about it. */
export interface StrandedChange {
  /** What, e.g. "nova-compute service on host-a". */
  readonly what: string;
  /** The reason drainer left on it (e.g. the disabled_reason). */
  readonly reason: string;
  /** true: undone now (the node is in service); false: left (the node is not in service). */
  readonly restored: boolean;
}

export interface StrandedOptions {
  readonly signal: AbortSignal;
  /** The node is in service: what is recognisably drainer's is undone. */
  readonly inService: boolean;
  readonly dryRun: boolean;
  readonly log: Logger;
}

/** What a plugin did at a host shutdown's deadline with the VMs still on the host (core/shutdown). */
export interface ShutdownFallback {
  /** Stopped through the cloud, marked as drainer's: started again after boot. */
  readonly stopped: readonly string[];
  /** A migration under way, left to finish. */
  readonly migrating: readonly string[];
  /** Left as they are, and why (already off, busy, the stop refused). */
  readonly left: readonly { readonly id: string; readonly why: string }[];
}

export interface ShutdownFallbackContext {
  readonly log: Logger;
  /** Ends before logind's deadline: the lock is given back then, done or not. */
  readonly signal: AbortSignal;
  /**
   * How long the fallback has (the signal fires then), in the plugin's own clock's milliseconds: a
   * wait inside it ends early enough to act on what it waited for.
   */
  readonly marginMs: number;
  readonly trigger: string;
}

/** The stop of an agent no successor follows, in the middle of an evacuation (core/agent/left-for-good.ts). */
export interface LeftForGoodContext {
  readonly log: Logger;
  /** The time the stop gives: what is not done by then is left, and said. */
  readonly signal: AbortSignal;
  /** What this plugin saved in the record (kept for an agent put back). */
  readonly record: PluginRecord | undefined;
}

export interface PlanOptions {
  /** Compute the capacity verdict (false when evacuation.capacityCheck is off). */
  readonly capacity?: boolean;
}

export interface BackendPlugin {
  readonly name: string;
  /** Lists what would move, what blocks it and (opts.capacity) whether it fits elsewhere. No side effects. */
  plan(node: NodeRef, signal: AbortSignal, opts?: PlanOptions): Promise<Plan>;
  /** Moves every workload off the node. Idempotent; resumes from ctx.record. */
  evacuate(node: NodeRef, ctx: EvacuationContext): Promise<Outcome>;
  /** Undoes only what ctx.record says this plugin changed. */
  restore(node: NodeRef, ctx: RestoreContext): Promise<void>;
  /**
   * Optional: with no record on the node, is a change of drainer's still in place (e.g. nova-compute
   * disabled with drainer's reason after the Node was deleted and registered again)? Undone when
   * `inService`; answers what was found, or undefined for nothing.
   */
  stranded?(node: NodeRef, opts: StrandedOptions): Promise<StrandedChange | undefined>;
  /**
   * Optional, for backends behind credentials of their own (a cloud): can they still sign in?
   * At most one request (reusing a valid token costs none); throws AuthError when rejected. The
   * only way an agent with a wrong password can say so before the next cordon (/readyz, a metric);
   * kept optional so a backend on the cluster's own credentials (KubeVirt) needs nothing.
   */
  checkAuth?(signal: AbortSignal): Promise<void>;
  /**
   * Optional: the host goes down by itself and logind's time is up (core/shutdown). Does what can
   * still be done for each VM on the host (Nova: os-stop, marked, so the restore after boot starts
   * it). A backend without it leaves its VMs to their own policy (KubeVirt: the VM's run strategy).
   */
  atShutdown?(node: NodeRef, ctx: ShutdownFallbackContext): Promise<ShutdownFallback>;
  /**
   * Optional: the agent stops for good in the middle of an evacuation (no DaemonSet places a
   * successor). Finishes, within ctx.signal, what only drainer would ever finish (Nova: the confirm of
   * each resize it asked for, as it lands); what it started and Nova ends by itself is left to Nova.
   */
  leftForGood?(node: NodeRef, ctx: LeftForGoodContext): Promise<void>;
}
