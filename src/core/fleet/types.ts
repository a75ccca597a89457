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
   * aborted first. The node stays queued (label kept) on abort: `leave` takes it out.
   */
  acquire(o: {
    node: string;
    queuedSince: Date;
    signal: AbortSignal;
    /** Each time the holders (or the place in the queue) changed. */
    onWait(w: SlotWait): void;
  }): Promise<Slot | undefined>;
  /** Takes the node out of the queue (uncordon while Queued). */
  leave(node: string): Promise<void>;
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
  listLeases(): Promise<LeaseView[]>;
  getLease(name: string): Promise<LeaseView>;
  /** ConflictError when it exists already. */
  createLease(l: LeaseView): Promise<LeaseView>;
  /** ConflictError when the resourceVersion is stale. */
  replaceLease(l: LeaseView): Promise<LeaseView>;
  queuedNodes(): Promise<{ node: string; since: number }[]>;
  setQueued(node: string, since: number | null): Promise<void>;
  /** One watch of the Leases (list, then watch; relists heal). Runs until the signal aborts. */
  watchLeases(
    onEvent: (type: string, lease: LeaseView) => void,
    onSynced: () => void,
    signal: AbortSignal,
  ): void;
  /** Nodes running the agent (for percentage budgets). */
  agentCount(): Promise<number>;
}
