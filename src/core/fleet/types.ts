// The cluster-wide evacuation budget as the core sees it: a node waits for a slot before its
// first change and holds it while Evacuating (design.md §5, README "Fleet maintenance").

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
}
