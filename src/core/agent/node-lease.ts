// One writer per node (issue 23 item 5): each agent instance holds the Lease drainer-node-<node>
// while it acts on its node. Its holder names the instance (pod name and uid), so two agents of one
// node (a DaemonSet rollout, run-once next to the daemon) see each other: the second waits, and
// run-once refuses. Renewed every half of its duration (a fleet slot every third: an idle agent's
// node Lease is most of what it asks the API server for, issue 38); a holder whose Lease this process
// has seen unchanged for the duration (kill -9) may be replaced (observed.ts: our own clock, never
// against the holder's renewTime), and `drainer status` says the agent is gone.
import type { Logger } from '../../observability/logger.ts';
import { isConflictError } from '../../errors.ts';
import { wait } from './retry.ts';
import { HeldSlot, microTime } from '../fleet/budget.ts';
import { holderPodGone, type ReadHolderPod } from '../fleet/holder-pod.ts';
import { monotonicMs, ObservedLeases } from '../fleet/observed.ts';
import type { FleetApi, LeaseView, Slot } from '../fleet/types.ts';

export { kubeHolderPod, type HolderPod } from '../fleet/holder-pod.ts';

const PREFIX = 'drainer-node-';
export const nodeLeaseName = (node: string): string => `${PREFIX}${node}`;
/** The node an agent Lease is for; undefined for another Lease. */
export const nodeOfLease = (name: string): string | undefined =>
  name.startsWith(PREFIX) ? name.slice(PREFIX.length) : undefined;
/** The agent Leases' app.kubernetes.io/component label. */
export const NODE_LEASE_COMPONENT = 'node-agent';

export interface NodeLeaseOptions {
  readonly api: Pick<FleetApi, 'getLease' | 'createLease' | 'replaceLease'>;
  readonly node: string;
  /** This agent instance: "<pod name>/<pod uid>", else "<hostname>/<pid>". */
  readonly instance: string;
  readonly durationSeconds: number;
  readonly log: Logger;
  readonly now?: () => Date;
  /** Our own clock for expiry (default performance.now). */
  readonly monotonic?: () => number;
  /**
   * The agent pod of a holder "<pod name>/<pod uid>" as the API server has it (undefined: none of
   * that name). A holder whose pod is gone, made again, or finished renews no more: taken at once.
   */
  readonly holderPod?: ReadHolderPod;
}

/**
 * Held (ours now, renewed until released), or the holder that is not us: `live` once we saw it
 * renew, else it is only not yet known to be gone (first seen less than a lease duration ago).
 */
export type LeaseTake =
  | { readonly held: Slot }
  | {
      readonly holder: string;
      readonly renewTime?: string;
      readonly live?: boolean;
      /** Renewed within its duration by our clock against its renewTime: it looks live (a one-shot refuses). */
      readonly looksLive?: boolean;
      /** renewTime plus its duration: when a holder that looks live runs out if it renews no more. */
      readonly runsOutAt?: string;
      /** Ms of our own observation until the holder counts as gone. */
      readonly leftMs?: number;
    };

export class NodeLease {
  readonly #o: NodeLeaseOptions;
  readonly #observed: ObservedLeases;

  constructor(o: NodeLeaseOptions) {
    this.#o = o;
    this.#observed = new ObservedLeases(o.monotonic ?? monotonicMs);
  }

  get name(): string {
    return nodeLeaseName(this.#o.node);
  }

  /** When the holder's Lease runs out by its renewTime (the holder's clock) against ours: live until then. */
  #runsOut(l: LeaseView, now: Date): { looksLive: boolean; runsOutAt?: string } {
    const at = Date.parse(l.renewTime ?? '') + (l.durationSeconds ?? this.#o.durationSeconds) * 1000;
    if (Number.isNaN(at)) return { looksLive: false };
    return { looksLive: at > now.getTime(), runsOutAt: new Date(at).toISOString() };
  }

  /**
   * One try (a read and a write): ours if nobody holds it, its holder has not renewed it for the
   * lease duration of our own time since we first saw it, or its holder's pod is gone.
   */
  async tryTake(): Promise<LeaseTake> {
    const { api, instance } = this.#o;
    const now = this.#o.now?.() ?? new Date();
    const current = await api.getLease(this.name);
    if (
      current?.holder &&
      current.holder !== instance &&
      !this.#observed.expired(current, this.#o.durationSeconds) &&
      !(await holderPodGone(
        current.holder,
        this.#o.holderPod,
        this.#o.log.child({ lease: this.name }),
        'the Lease',
      ))
    )
      return {
        holder: current.holder,
        ...(current.renewTime ? { renewTime: current.renewTime } : {}),
        live: this.#observed.observe(current).changes > 0,
        ...this.#runsOut(current, now),
        leftMs: this.#observed.expiresIn(current, this.#o.durationSeconds),
      };
    const t = microTime(now);
    const next: LeaseView = {
      ...(current ?? { name: this.name }),
      holder: instance,
      durationSeconds: this.#o.durationSeconds,
      acquireTime: current?.holder === instance && current.acquireTime ? current.acquireTime : t,
      renewTime: t,
      transitions: (current?.transitions ?? 0) + (current?.holder === instance ? 0 : 1),
    };
    try {
      const taken = current
        ? await api.replaceLease(next)
        : await api.createLease({ ...next, transitions: 0 });
      // at half the duration a failed renewal leaves half of it for the next try (an API outage)
      const opts = { api, leaseDuration: this.#o.durationSeconds, log: this.#o.log, renewEvery: 1 / 2 };
      return { held: new HeldSlot(taken, instance, opts, 'node Lease') };
    } catch (err) {
      if (!isConflictError(err)) throw err;
      // another instance won the race: it is the holder now
      const winner = await api.getLease(this.name);
      return {
        holder: winner?.holder ?? 'another agent',
        ...(winner?.renewTime ? { renewTime: winner.renewTime } : {}),
      };
    }
  }

  /**
   * For a one-shot command (run-once, restore), which has never seen the Lease before. A holder
   * whose renewTime is within its duration looks live: answered at once (`looksLive`), no waiting
   * to see it renew. Only a silent holder (renewTime older than its duration: gone, or its clock
   * far behind ours) is watched, for up to the duration of our own time, since clocks can
   * disagree: one that renews meanwhile is live; one that does not is gone, and the Lease is taken.
   * `onWatch` hears each look while watching, with the seconds left.
   */
  async takeWatching(
    signal: AbortSignal,
    onWatch?: (holder: string, secondsLeft: number, renewTime?: string) => void,
  ): Promise<LeaseTake> {
    const pollMs = Math.min(2000, (this.#o.durationSeconds * 1000) / 6);
    for (let first = true; ; first = false) {
      const take = await this.tryTake();
      if ('held' in take || take.live || signal.aborted) return take;
      if (first && take.looksLive) return take;
      onWatch?.(take.holder, Math.max(0, Math.ceil((take.leftMs ?? 0) / 1000)), take.renewTime);
      await wait(pollMs, signal);
    }
  }

  /**
   * Waits until the Lease is ours (a second agent of the node waits here); undefined when the
   * signal aborted first. `onWait` hears of each holder it waits for.
   */
  async acquire(signal: AbortSignal, onWait?: (holder: string) => void): Promise<Slot | undefined> {
    let told = '';
    while (!signal.aborted) {
      try {
        const take = await this.tryTake();
        if ('held' in take) return take.held;
        if (take.holder !== told) onWait?.(take.holder);
        told = take.holder;
      } catch (err) {
        this.#o.log.warn({ err, lease: this.name }, 'could not read or take the node Lease; trying again');
      }
      await wait((this.#o.durationSeconds * 1000) / 3, signal);
    }
    return undefined;
  }
}
