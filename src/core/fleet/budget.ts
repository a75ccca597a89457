// The fair, lease-based evacuation budget. Slots are Leases `drainer-evacuation-<i>`, taken and
// renewed like client-go leader election: writes carry the read resourceVersion, a 409 means
// another agent won, and a holder whose Lease this agent has seen unchanged for leaseDuration (its
// own monotonic time, observed.ts: never its clock against the holder's renewTime) may be replaced,
// unless its node still evacuates on that slot and its agent may come back (holder-alive.ts).
// Waiters order themselves by the drainer.dev/queued label (oldest first, then node name) and
// re-check only when a Lease changes holder, a held one may have expired, or a slow resync fires.
import type { Logger } from '../../observability/logger.ts';
import { isConflictError, isNotFoundError } from '../../errors.ts';
import type { EvacuationBudget, FleetApi, LeaseView, Slot, SlotWait } from './types.ts';
import { LeaseCache } from './lease-cache.ts';
import type { ObservedLeases } from './observed.ts';
import { HeldSlot, microTime } from './held-slot.ts';
import { HolderAlive } from './holder-alive.ts';
import { announceReturn, RETURN_LEASE, returnMark } from './queue-return.ts';
import { holderNode, slotCount, slotHolder, slotName } from './slots.ts';

// the held Lease (also the agent's node Lease) and its MicroTime live in held-slot.ts
export { HeldSlot, microTime, type HeldLeaseOptions } from './held-slot.ts';

// the slots' names and holders live in slots.ts
export { holderNode, leaseExpired, slotCount, slotHolder, slotName } from './slots.ts';

export interface FleetBudgetOptions {
  readonly api: FleetApi;
  readonly budget: string | number;
  /** Seconds a holder may go without renewing before its slot may be taken. */
  readonly leaseDuration: number;
  /**
   * fleet.agentLeaseDuration (default 300): a slot holder whose host is still evacuating keeps its
   * slot until its agent Lease has gone unrenewed this long (holder-alive.ts), unless its Lease says otherwise.
   */
  readonly agentLeaseDuration?: number;
  /**
   * A page of the queue (default 50, at least twice the slots): a queue that short is read whole;
   * in a longer one a waiter reads the page queued just before it first (#ahead).
   */
  readonly queuePage?: number;
  /** Safety re-check while waiting, ms (missed watch events heal). */
  readonly resyncMs?: number;
  readonly log: Logger;
  /** This agent instance (config instance): written into the holder beside the node. */
  readonly instance?: string;
  /** The agent's lifetime: the Lease watch runs until it aborts. */
  readonly signal: AbortSignal;
  readonly now?: () => Date;
  /**
   * Our own clock for expiry (default performance.now): never compared with another machine's.
   * For the budget's own Lease watch; a shared `cache` brings its own.
   */
  readonly monotonic?: () => number;
  /** The agent's Lease watch, when shared (with the start gate's Prometheus verdict). */
  readonly cache?: LeaseCache;
}

/** One node's wait, across the loop's turns. */
interface QueueState {
  queued: boolean;
  lastWait: string;
  /** Leases to read from the API, not the watch, on the next turn (a lost race: 409 or 404). */
  recheck: string[];
  relist: boolean;
  /** The nodes ahead, as listed, less those seen taking a slot since. */
  ahead?: Set<string>;
  /** `ahead` holds only the nodes queued just before this one: others are ahead of them. */
  more: boolean;
  /** The cache version the queue was listed at: holders seen since then are no longer waiting. */
  from: number;
  /**
   * The word of returns (queue-return.ts) when the queue was listed, and the Lease watch's opens
   * then: a watch re-opened since may have missed a word in its gap.
   */
  returns: string;
  freeSince?: number;
  /** How many were ahead at the last look while a slot was free: fewer restarts `freeSince`. */
  freeAhead?: number;
}

export class FleetBudget implements EvacuationBudget {
  readonly #o: FleetBudgetOptions;
  readonly #cache: LeaseCache;
  readonly #observed: ObservedLeases;
  readonly #alive: HolderAlive;
  #agents: { count: number; at: number } | undefined;

  constructor(o: FleetBudgetOptions) {
    this.#o = o;
    this.#cache = o.cache ?? new LeaseCache(o.api, o.signal, o.monotonic);
    // the watch's events and this budget's own reads time the same observations
    this.#observed = this.#cache.observed;
    this.#alive = new HolderAlive({
      api: o.api,
      observed: this.#observed,
      agentLeaseDuration: o.agentLeaseDuration ?? 300,
      lookAgainMs: o.resyncMs ?? 60_000,
      log: o.log,
    });
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }

  /** Nobody holds it, or we have seen it unchanged for its duration (observed.ts). */
  #expired(l: LeaseView): boolean {
    return this.#observed.expired(l, this.#o.leaseDuration);
  }

  async #total(): Promise<number> {
    const b = this.#o.budget;
    if (typeof b === 'number') return b;
    const now = Date.now();
    if (!this.#agents || now - this.#agents.at > 60_000)
      this.#agents = { count: await this.#o.api.agentCount(), at: now };
    return slotCount(b, this.#agents.count);
  }

  async acquire(o: {
    node: string;
    queuedSince: Date;
    signal: AbortSignal;
    enqueue(): Promise<void>;
    returning?: boolean;
    resume?: string;
    onWait(w: SlotWait): void;
  }): Promise<Slot | undefined> {
    const since = o.queuedSince.getTime();
    const q: QueueState = {
      queued: false,
      lastWait: '',
      recheck: [],
      relist: true,
      more: false,
      from: this.#cache.version,
      returns: '',
    };
    while (!o.signal.aborted) {
      const seen = this.#cache.version;
      const total = await this.#total();
      // the first wait opens the agent's Lease watch (one request); later waits read it for free
      const byName = new Map((await this.#cache.current()).map((l) => [l.name, l]));
      for (const [name, l] of await this.#read(q)) {
        if (l) byName.set(name, l);
        else byName.delete(name);
      }
      // the queue's stale timer runs on the clock expiry runs on (ours, monotonic), as its wake-up does
      const now = this.#observed.now();
      const slots = Array.from({ length: total }, (_, i) => byName.get(slotName(i)) ?? { name: slotName(i) });
      const ours = slots.filter((l) => l.holder && holderNode(l.holder) === o.node && !this.#expired(l));
      // resume: the slot this evacuation began on, still ours (not expired), is renewed, never doubled
      const mine = ours.find((l) => l.name === o.resume);
      // any other slot naming our node was left by an agent stopped while it held one (its record
      // since restored): given back, and taken in our turn like anyone's, never jumped to
      const left = ours.filter((l) => l !== mine);
      if (left.length) {
        await this.#giveBackLeft(left, q);
        continue;
      }
      const free = mine ? [] : await this.#free(slots, o.node);
      // the returns this turn's list will show: its own word's (written before the list) is no news
      let returns = this.#returns(byName.get(RETURN_LEASE));
      if (!q.queued && !mine) {
        await o.enqueue();
        q.queued = true;
        if (o.returning) {
          const word = await announceReturn(this.#o.api, byName.get(RETURN_LEASE), {
            node: o.node,
            place: since,
            now: this.#now(),
          });
          if (word) returns = this.#returns(word);
        }
      }
      const aheadN = await this.#ahead(q, {
        node: o.node,
        since,
        seen,
        returns,
        slots,
        total,
        free: mine ? 0 : free.length,
        returning: o.returning === true,
      });
      const stale = this.#stale(q, free.length, aheadN, now);
      const candidates = mine ? [mine] : stale ? free : free.slice(aheadN);
      // its turn by a list: read it again before taking if a node came back into the queue, in its
      // old place, since the list was asked for (queue-return.ts): the list cannot have shown it. By
      // the watch as it is now: a word that came while this turn's list was read counts too
      if (
        !mine &&
        !stale &&
        candidates.length &&
        q.returns !== this.#returns((await this.#cache.current()).find((l) => l.name === RETURN_LEASE))
      ) {
        q.relist = true;
        continue;
      }
      const taken = await this.#takeFirst(candidates, o.node, q);
      if (taken) {
        // the label comes off with the record's phase Evacuating (one write); until then the
        // other waiters already skip this node, as the Lease names it
        this.#o.log.info({ slot: taken.name }, 'took a fleet evacuation slot');
        return new HeldSlot(taken, slotHolder(o.node, this.#o.instance), this.#o);
      }
      if (candidates.length) continue; // lost a race: look again at once, at the API's own view
      this.#tell(q, (w) => o.onWait(w), slots, free, total);
      const resyncMs = this.#o.resyncMs ?? 60_000;
      const waitMs = Math.min(
        resyncMs,
        this.#nextExpiry(slots),
        this.#staleIn(q, now),
        this.#alive.nextLookIn(),
      );
      const changed = await this.#cache.changed(Math.max(10, waitMs), o.signal, seen);
      // only the slow resync lists the queue again (missed watch events heal); a wake-up to see
      // whether a holder stopped renewing, or a slot stayed free, is answered from the watch
      if (!changed && waitMs >= resyncMs) q.relist = true;
    }
    return undefined;
  }

  /** The word of returns in this Lease, and the watch's opens (a re-opened watch may have missed one). */
  #returns(lease: LeaseView | undefined): string {
    return `${returnMark(lease)} ${this.#cache.opens}`;
  }

  /**
   * How many queued nodes come before this one. The queue is read once, then a node is dropped
   * when the Lease watch shows it took a slot; read again only after a wait ended on the resync.
   * In a queue longer than a page (queuePage), a node learns only the page of nodes queued just
   * before it: it must wait while they do, and they go last before it, so it reads the rest (few by
   * then) once fewer of them are left than there are free slots. Every waiter listing the whole
   * queue, or the same head of it, kept the API server busy for seconds in a 1,000-node roll (issue 38).
   */
  async #ahead(
    q: QueueState,
    o: {
      node: string;
      since: number;
      seen: number;
      returns: string;
      slots: readonly LeaseView[];
      total: number;
      free: number;
      returning: boolean;
    },
  ): Promise<number> {
    this.#dropHolders(q, o.slots);
    const atFront = q.more && q.ahead !== undefined && q.ahead.size < o.free && !q.relist;
    if (o.free > 0 && (!q.ahead || q.relist || atFront)) {
      const want = Math.max(2 * o.total, this.#o.queuePage ?? 50);
      // new at the tail and a slot free (no wait told yet): those ahead came at about the same moment,
      // or they would have taken it, so the queue is likely short. A first read at a hand-off may be
      // deep in a roll's long queue; nodes back in old places come in crowds (a window opens)
      const fewAhead = !o.returning && !q.ahead && q.lastWait === '';
      const { nodes, more } = await this.#o.api.queuedAhead({
        node: o.node,
        since: o.since,
        ...(atFront ? {} : { want, fewAhead }),
      });
      q.ahead = new Set(nodes);
      q.more = more;
      q.relist = false;
      // the Leases were read at `seen`: holders from then on are counted, not just after the list
      q.from = o.seen;
      q.returns = o.returns;
      this.#dropHolders(q, o.slots);
    }
    return q.ahead?.size ?? 0;
  }

  /**
   * The slots this node may take: nobody holds them, or their holder stopped renewing and is not
   * still evacuating with an agent that may come back (holder-alive.ts). Our own node's slot is
   * never held back from us: we are its agent.
   */
  async #free(slots: readonly LeaseView[], node: string): Promise<LeaseView[]> {
    const expired = slots.filter((l) => this.#expired(l));
    const held = await this.#alive.held(
      expired.flatMap((lease) => {
        const n = lease.holder ? holderNode(lease.holder) : node;
        return n === node ? [] : [{ lease, node: n }];
      }),
    );
    return expired.filter((l) => !held.has(l.name));
  }

  /** A node that took a slot is not waiting, even while its label is still being removed. */
  #dropHolders(q: QueueState, slots: readonly LeaseView[]): void {
    if (!q.ahead) return;
    for (const l of slots) if (l.holder) q.ahead.delete(holderNode(l.holder));
    for (const holder of this.#cache.holdersSince(q.from)) q.ahead.delete(holderNode(holder));
  }

  /** A slot left free for a lease duration while the nodes ahead do not take it: they are gone. */
  #stale(q: QueueState, free: number, ahead: number, now: number): boolean {
    if (!free || ahead < free) q.freeSince = undefined;
    // fewer ahead (one took a slot, or left): the queue moves, so those still ahead are not gone
    else if (q.freeSince === undefined || ahead < (q.freeAhead ?? ahead)) q.freeSince = now;
    q.freeAhead = ahead;
    return q.freeSince !== undefined && now - q.freeSince > this.#o.leaseDuration * 1000;
  }

  #staleIn(q: QueueState, now: number): number {
    return q.freeSince !== undefined ? q.freeSince + this.#o.leaseDuration * 1000 - now : Infinity;
  }

  /** Ms until the first held slot may expire (a holder that stopped renewing), by observation. */
  #nextExpiry(slots: readonly LeaseView[]): number {
    const held = slots.filter((l) => !this.#expired(l));
    return Math.min(Infinity, ...held.map((l) => this.#observed.expiresIn(l, this.#o.leaseDuration) + 50));
  }

  /**
   * The first candidate this node could take. A 409 (another node won, or a create of a Lease the
   * watch had not shown yet) or a 404 (deleted) puts the Lease on the recheck list.
   */
  async #takeFirst(
    candidates: readonly LeaseView[],
    node: string,
    q: QueueState,
  ): Promise<LeaseView | undefined> {
    for (const l of candidates) {
      try {
        return await this.#take(l, node);
      } catch (err) {
        if (!isConflictError(err) && !isNotFoundError(err)) throw err;
        q.recheck.push(l.name);
      }
    }
    return undefined;
  }

  /** Clears the holder of slots left naming our node, guarded by their resourceVersion; read again next turn. */
  async #giveBackLeft(left: readonly LeaseView[], q: QueueState): Promise<void> {
    for (const l of left) {
      const { holder: _h, ...rest } = l;
      this.#o.log.info({ slot: l.name }, 'gave back a fleet slot left by an earlier agent of this node');
      await this.#o.api.replaceLease({ ...rest, renewTime: microTime(this.#now()) }).catch((err: unknown) => {
        if (!isConflictError(err) && !isNotFoundError(err)) throw err;
      });
      q.recheck.push(l.name);
    }
  }

  /** The Leases on the recheck list as the API has them now (undefined: there is none). */
  async #read(q: QueueState): Promise<[string, LeaseView | undefined][]> {
    const names = [...new Set(q.recheck)];
    q.recheck = [];
    return Promise.all(
      names.map(async (n): Promise<[string, LeaseView | undefined]> => [n, await this.#o.api.getLease(n)]),
    );
  }

  #tell(
    q: QueueState,
    onWait: (w: SlotWait) => void,
    slots: readonly LeaseView[],
    free: readonly LeaseView[],
    total: number,
  ) {
    const holders = slots
      .filter((l) => l.holder && !free.includes(l))
      .map((l) => ({
        node: holderNode(l.holder ?? ''),
        slot: l.name,
        ...(l.acquireTime ? { since: l.acquireTime } : {}),
      }));
    const wait = {
      total,
      holders,
      ...(q.ahead ? { position: q.ahead.size + 1 } : {}),
      ...(q.ahead && q.more ? { orLater: true } : {}),
    };
    const key = JSON.stringify(wait);
    if (key !== q.lastWait) onWait(wait);
    q.lastWait = key;
  }

  async #take(l: LeaseView, node: string): Promise<LeaseView> {
    const t = microTime(this.#now());
    const duration = Math.max(1, Math.ceil(this.#o.leaseDuration));
    const same = l.holder !== undefined && holderNode(l.holder) === node;
    const next: LeaseView = {
      ...l,
      holder: slotHolder(node, this.#o.instance),
      durationSeconds: duration,
      acquireTime: same && l.acquireTime ? l.acquireTime : t,
      renewTime: t,
      transitions: (l.transitions ?? 0) + (same ? 0 : 1),
    };
    return l.resourceVersion === undefined
      ? this.#o.api.createLease({ ...next, transitions: 0 })
      : this.#o.api.replaceLease(next);
  }
}
