// A slot whose holder stopped renewing it is not free while the holder's host may still be
// evacuating (issue 48): after a kill -9 of the holder's agent, Nova goes on with the live
// migrations it started, and the restarted agent resumes them on that slot. So a slot expired by
// renewal, whose holder node's record still says Evacuating on it, is taken only once that node's
// agent is known gone: its agent Lease drainer-node-<node> missing, or unchanged (renewed or given
// back) for its duration by our own observation (observed.ts), or that agent's pod gone (holder-pod.ts). A slot given back (holder
// cleared) is never looked at: the normal hand-off costs nothing.
import type { Logger } from '../../observability/logger.ts';
import type { RecordRead } from '../record/record.ts';
import { holderPodGone } from './holder-pod.ts';
import type { ObservedLeases } from './observed.ts';
import type { FleetApi, LeaseView } from './types.ts';

export interface HolderAliveOptions {
  readonly api: Pick<FleetApi, 'nodeRecord' | 'agentLease' | 'holderPod'>;
  /** The budget's observations (the agent Leases are timed on the same clock as the slots). */
  readonly observed: ObservedLeases;
  /** fleet.agentLeaseDuration: for an agent Lease that names no duration. */
  readonly agentLeaseDuration: number;
  /** Ms of our time before a slot held back is looked at again, at most (its record may change). */
  readonly lookAgainMs: number;
  readonly log: Logger;
}

interface Look {
  /** The slot's record when looked at: a renewal or a new holder makes it a new question. */
  readonly key: string;
  readonly held: boolean;
  /** Our monotonic ms when the answer may have changed. */
  readonly until: number;
}

const keyOf = (l: LeaseView): string => `${l.holder ?? ''} ${l.renewTime ?? ''} ${l.resourceVersion ?? ''}`;

/** Still evacuating on this slot: Evacuating on it (or on none named), or a record we cannot read. */
const evacuatingOn = (r: RecordRead, slot: string): boolean =>
  r.kind === 'unreadable' ||
  (r.kind === 'ok' && r.record.phase === 'Evacuating' && (r.record.slot ?? slot) === slot);

export class HolderAlive {
  readonly #o: HolderAliveOptions;
  readonly #looks = new Map<string, Look>();

  constructor(o: HolderAliveOptions) {
    this.#o = o;
  }

  /**
   * The names of the slots (expired by renewal, each with its holder's node) still their holder's.
   * One look per slot until its answer may change: the holder's Node (one GET); if it is
   * evacuating, its agent Lease (one GET), and if that is live, its holder's pod when it names one.
   */
  async held(expired: readonly { lease: LeaseView; node: string }[]): Promise<Set<string>> {
    for (const name of this.#looks.keys())
      if (!expired.some((x) => x.lease.name === name)) this.#looks.delete(name);
    const held = new Set<string>();
    for (const { lease, node } of expired) if (await this.#held(lease, node)) held.add(lease.name);
    return held;
  }

  /** Ms of our time until a slot held back is looked at again (Infinity: none is). */
  nextLookIn(): number {
    const now = this.#o.observed.now();
    const held = [...this.#looks.values()].filter((x) => x.held);
    return Math.min(Infinity, ...held.map((x) => Math.max(0, x.until - now) + 50));
  }

  /**
   * Ms of our time until the node's agent counts as gone: its Lease unchanged for its duration.
   * A Lease given back counts as unchanged too: a stopped agent's successor (a rollout's new pod)
   * takes it again at once, and resumes the evacuation on its slot.
   */
  #agentLeft(agent: LeaseView, now: number): number {
    const seen = this.#o.observed.observe(agent);
    return seen.at + (agent.durationSeconds ?? this.#o.agentLeaseDuration) * 1000 - now;
  }

  async #held(l: LeaseView, holder: string): Promise<boolean> {
    const { api, observed, log } = this.#o;
    if (!api.nodeRecord || !api.agentLease) return false;
    const now = observed.now();
    const key = keyOf(l);
    const last = this.#looks.get(l.name);
    if (last?.key === key && now < last.until) return last.held;
    const look = (held: boolean, until = now + this.#o.lookAgainMs) => {
      this.#looks.set(l.name, { key, held, until });
      return held;
    };
    try {
      if (!evacuatingOn(await api.nodeRecord(holder), l.name)) return look(false);
      const agent = await api.agentLease(holder);
      const agentLeft = agent ? this.#agentLeft(agent, now) : 0;
      const gone =
        agentLeft <= 0 ||
        (agent?.holder !== undefined &&
          (await holderPodGone(agent.holder, api.holderPod, log, `${l.name}, held by ${holder}`)));
      if (gone) {
        log.info({ slot: l.name, holder }, `${holder}'s agent is gone: its slot goes on to the next node`);
        return look(false);
      }
      if (last?.key !== key)
        log.info(
          { slot: l.name, holder },
          `${holder} stopped renewing its slot but is still evacuating and its agent may come back: the slot stays its own`,
        );
      return look(true, now + Math.min(agentLeft, this.#o.lookAgainMs));
    } catch (err) {
      // in doubt (the API unreadable for a moment), the slot is not taken: looked at again soon
      log.debug({ err, slot: l.name, holder }, "could not read the slot holder's record or agent Lease");
      return look(true);
    }
  }
}
