// The cluster-wide evacuation budget as the core sees it: a node waits for a slot before its
// first change and holds it while Evacuating (design.md §5, README "Fleet maintenance").
import type { RecordRead } from '../record/record.ts';
import type { ReadHolderPod } from './holder-pod.ts';

/** A slot held by this node. `lost` aborts when renewing failed and another node may take it. */
export interface Slot {
  readonly name: string;
  readonly lost: AbortSignal;
  /** Gives the slot back (never throws; a failed release expires after the lease duration). */
  release(): Promise<void>;
  /** Stops renewing and keeps the Lease (shutdown): it expires, or the restarted agent re-takes it. */
  abandon(): void;
}

export interface SlotHolder {
  readonly node: string;
  readonly slot: string;
  /** acquireTime (ISO) */
  readonly since?: string;
}

/** What a waiting node is told each time the picture changes. */
export interface SlotWait {
  readonly total: number;
  readonly holders: readonly SlotHolder[];
  /** 1-based place in the queue, when a slot was free (the queue is only read then). */
  readonly position?: number;
  /** The queue was read only this far: the place is `position` or later. */
  readonly orLater?: boolean;
}

export interface EvacuationBudget {
  /**
   * Waits until this node holds a slot (queued since `queuedSince`); undefined when the signal
   * aborted first. The queue label is the caller's: it comes and goes with the record's phase
   * Queued (one Node write each way), so the budget neither sets nor removes it.
   */
  acquire(o: {
    node: string;
    queuedSince: Date;
    signal: AbortSignal;
    /**
     * Called once before the queue is read, unless the node still holds its slot: puts the node
     * in the queue (its label) if it is not there yet, e.g. a resumed evacuation that lost its slot.
     */
    enqueue(): Promise<void>;
    /**
     * Back in an old place (resumed, retried, let through by the start gate): waiters that read
     * the queue without it must hear of it (queue-return.ts). A node new at the tail is not.
     */
    returning?: boolean;
    /**
     * The slot the record says this evacuation holds (a restart resumes it): the only slot naming
     * this node that is taken back without queueing. Another one naming it is given back.
     */
    resume?: string;
    /** Each time the holders (or the place in the queue) changed. */
    onWait(w: SlotWait): void;
  }): Promise<Slot | undefined>;
}

export interface LeaseView {
  readonly name: string;
  readonly resourceVersion?: string;
  readonly holder?: string;
  readonly durationSeconds?: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly transitions?: number;
  /** Only the drainer.dev/ ones (the shared blocker verdict). */
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The Kubernetes calls of the budget (kube-port.ts over src/kube/lease.ts). */
export interface FleetApi {
  /** Undefined when there is no such Lease. */
  getLease(name: string): Promise<LeaseView | undefined>;
  /** ConflictError when it exists already. */
  createLease(l: LeaseView): Promise<LeaseView>;
  /** ConflictError when the resourceVersion is stale; NotFoundError when the Lease is gone. */
  replaceLease(l: LeaseView): Promise<LeaseView>;
  queuedNodes(): Promise<{ node: string; since: number }[]>;
  /**
   * The queued nodes ahead of this one (queued before it; at the same time, a smaller name). With
   * `want`: every one if they are at most `want`; else more than `want` of those queued just before
   * it, and `more` (others are ahead of them). Without: every one. `fewAhead`: a hint that the
   * queue is likely short, so what tells a short queue is read first (only the cost changes).
   */
  queuedAhead(o: {
    node: string;
    since: number;
    want?: number;
    fewAhead?: boolean;
  }): Promise<{ nodes: string[]; more: boolean }>;
  /**
   * One watch of the Leases, opened without a resourceVersion: the existing ones come first as
   * ADDED events (no list), then the changes; re-watches heal. `onOpen` each time a stream opens.
   * Runs until the signal aborts.
   */
  watchLeases(
    onEvent: (type: string, lease: LeaseView) => void,
    onOpen: () => void,
    signal: AbortSignal,
  ): void;
  /** Nodes running the agent (for percentage budgets). */
  agentCount(): Promise<number>;
  /**
   * The node's record as its Node has it now (one GET); absent when the Node is gone. Without this
   * (and agentLease), a slot expired by renewal is taken without asking whether its holder's host
   * is still evacuating (holder-alive.ts).
   */
  nodeRecord?(node: string): Promise<RecordRead>;
  /** The node's agent Lease drainer-node-<node> (undefined: there is none). */
  agentLease?(node: string): Promise<LeaseView | undefined>;
  /** The agent pod of that name in the fleet namespace (undefined: none of that name). */
  holderPod?: ReadHolderPod;
}

/** Why a node may not start yet (a window, a freeze, a blocker), and until when if known. */
export type WaitKind = 'window' | 'freeze' | 'prometheus' | 'pods';

export type StartVerdict =
  | { readonly open: true }
  | {
      readonly open: false;
      readonly kind: WaitKind;
      /** "outside the maintenance window; opens Sat 02:00 Europe/Berlin (in 9 h 12 min)" */
      readonly reason: string;
      /** epoch ms of the earliest start the calendar allows, when the calendar holds it */
      readonly until?: number;
    };

/** The fleet-wide picture for metrics and `drainer status` (calendar and shared blockers). */
export interface GateState {
  readonly windowOpen: boolean;
  readonly nextOpening?: number;
  readonly freezes: readonly string[];
  /** per blocker: undefined when not configured; else firing (or unknown) text, or '' when clear */
  readonly blockers: Readonly<Record<string, string | undefined>>;
}

/** When may a node start: windows, freezes and blockers (fleet.maintenanceWindows, freezes, blockers). */
export interface StartGate {
  check(o: { node: string; queuedAt: Date; signal: AbortSignal }): Promise<StartVerdict>;
  /** How long to wait before checking again (ms), given the last verdict. */
  recheckMs(v: StartVerdict): number;
  /** What the last checks saw, fleet-wide. */
  state(): GateState;
}
