// One Prometheus verdict for the whole fleet, kept on the Lease drainer-blockers in the fleet
// namespace. Agents with a waiting node read it from the Lease watch the budget already keeps
// (no request); when it is older than the interval, one agent claims the refresh by writing the
// Lease at the resourceVersion it read (the others get a 409 and keep reading), asks Prometheus
// once, and writes the answer. Per interval, fleet-wide: one query, two Lease writes, plus one
// refused write per agent that raced for the same claim. A claim whose verdict never came (the
// agent died) may be taken again after an interval; a verdict older than three intervals is
// treated as unknown, which blocks.
import { isConflictError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { LeaseCache } from './lease-cache.ts';
import { microTime } from './budget.ts';
import type { FleetApi, LeaseView } from './types.ts';

export const BLOCKERS_LEASE = 'drainer-blockers';
export const VERDICT_ANNOTATION = 'drainer.dev/prometheus-verdict';

export interface Verdict {
  /** epoch ms of the answer */
  readonly at: number;
  readonly firing: readonly string[];
  /** why Prometheus could not be evaluated (blocked) */
  readonly error?: string;
}

export interface SharedVerdictOptions {
  readonly api: FleetApi;
  readonly cache: LeaseCache;
  readonly identity: string;
  readonly intervalMs: number;
  readonly ask: (signal: AbortSignal) => Promise<string[]>;
  readonly now: () => Date;
  readonly log: Logger;
  /** Counts each query (the bench and metrics). */
  readonly onQuery?: () => void;
  /** How long a loser of the claim waits for the winner's verdict on the watch (ms). */
  readonly settleMs?: number;
}

const parse = (l: LeaseView | undefined): Verdict | undefined => parseVerdict(l?.annotations);

/** The verdict in a Lease's annotations (undefined: none or unreadable). */
export function parseVerdict(annotations: Readonly<Record<string, string>> | undefined): Verdict | undefined {
  const text = annotations?.[VERDICT_ANNOTATION];
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as Verdict;
    return typeof v.at === 'number' && Array.isArray(v.firing) ? v : undefined;
  } catch {
    return undefined;
  }
}

export class SharedVerdict {
  readonly #o: SharedVerdictOptions;
  #inflight: Promise<Verdict | undefined> | undefined;

  constructor(o: SharedVerdictOptions) {
    this.#o = o;
  }

  /** The fleet's verdict as fresh as the interval allows (refreshing it when it is this agent's turn). */
  async get(signal: AbortSignal): Promise<Verdict> {
    const now = this.#o.now().getTime();
    const due = await this.#due(now);
    const mine = due
      ? await (this.#inflight ??= this.#claim(signal).finally(() => (this.#inflight = undefined)))
      : undefined;
    const verdict = parse(await this.#lease());
    // lost the claim: the winner's answer comes on the watch within its query's timeout (no request)
    const v = mine ?? (due && !verdict ? await this.#settled(verdict, signal) : verdict);
    if (!v) return { at: now, firing: [], error: 'no Prometheus verdict yet (another agent is asking)' };
    if (now - v.at > 3 * this.#o.intervalMs)
      return {
        at: v.at,
        firing: [],
        error: `the last Prometheus verdict is from ${new Date(v.at).toISOString()}`,
      };
    return v;
  }

  #lease = async (): Promise<LeaseView | undefined> =>
    (await this.#o.cache.current()).find((l) => l.name === BLOCKERS_LEASE);

  /** Neither a claim nor a verdict within the interval. */
  async #due(now: number): Promise<boolean> {
    const lease = await this.#lease();
    const verdict = parse(lease);
    const claimed = Date.parse(lease?.acquireTime ?? '');
    return !(now - claimed < this.#o.intervalMs) && !(verdict && now - verdict.at < this.#o.intervalMs);
  }

  /**
   * Claims the refresh after a pause of this agent's own (0 to 1 s, from its name), so that agents
   * that found the verdict stale together do not all write: the first claim reaches the others on
   * the watch before their turn. Undefined when another agent claimed it.
   */
  async #claim(signal: AbortSignal): Promise<Verdict | undefined> {
    await new Promise((r) => setTimeout(r, this.#stagger()));
    if (signal.aborted || !(await this.#due(this.#o.now().getTime()))) return undefined;
    return this.#refresh(await this.#lease(), signal);
  }

  #stagger(): number {
    let h = 0;
    for (const c of this.#o.identity) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return (h % 1000) * (Math.min(this.#o.intervalMs / 4, 1000) / 1000);
  }

  /** The first verdict newer than `was` the watch brings, within settleMs; else `was`. */
  async #settled(was: Verdict | undefined, signal: AbortSignal): Promise<Verdict | undefined> {
    for (let waited = 0; !signal.aborted && waited < (this.#o.settleMs ?? 12_000); waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
      const now = parse((await this.#o.cache.current()).find((l) => l.name === BLOCKERS_LEASE));
      if (now && now.at !== was?.at) return now;
    }
    return was;
  }

  /** Claims the refresh; undefined when another agent won the claim. */
  async #refresh(lease: LeaseView | undefined, signal: AbortSignal): Promise<Verdict | undefined> {
    const t = microTime(this.#o.now());
    const claim: LeaseView = {
      ...(lease ?? { name: BLOCKERS_LEASE }),
      holder: this.#o.identity,
      acquireTime: t,
      renewTime: t,
    };
    let claimed: LeaseView;
    try {
      claimed = lease?.resourceVersion
        ? await this.#o.api.replaceLease(claim)
        : await this.#o.api.createLease(claim);
    } catch (err) {
      if (isConflictError(err)) return undefined;
      throw err;
    }
    this.#o.onQuery?.();
    const verdict: Verdict = await this.#o.ask(signal).then(
      (firing) => ({ at: this.#o.now().getTime(), firing }),
      (err: unknown) => ({
        at: this.#o.now().getTime(),
        firing: [],
        error: err instanceof Error ? err.message : String(err),
      }),
    );
    await this.#o.api
      .replaceLease({
        ...claimed,
        renewTime: microTime(this.#o.now()),
        annotations: { ...claimed.annotations, [VERDICT_ANNOTATION]: JSON.stringify(verdict) },
      })
      .catch((err: unknown) => this.#o.log.warn({ err }, 'could not share the Prometheus verdict'));
    return verdict;
  }
}
