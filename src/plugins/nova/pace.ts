// When to look at Nova next. Migrations submitted ahead sit in Nova's queue for the source host, so
// the drainer need not notice an end at once: only before that queue runs dry. The pace learns how
// often migrations end on this host (from when Nova says each ended, not when a poll saw it) and
// looks again when about half of what is in flight can have ended; before it knows, it starts quick
// and doubles. nova.pollInterval is the upper bound. The gap is learned and applied on the host's
// working time (work-clock.ts): slots parked by busy guests end nothing meanwhile.
import { WorkClock } from './work-clock.ts';

/** The quickest poll (or pollInterval when that is shorter). */
export const MIN_POLL_MS = 1000;
/**
 * The quickest poll in the tail, when the evacuation waits only for the last migrations to be seen
 * ending: a handful of polls more, once per evacuation, for ending sooner.
 */
export const TAIL_MIN_POLL_MS = 500;
/** Ends remembered for the rate: recent enough to follow a change in the mix. */
const WINDOW = 20;
/** Look again when this share of the in-flight work can have ended. */
export const SHARE = 0.5;
/**
 * With nothing left to submit no queue covers for us: the evacuation ends when the last end is
 * noticed, so look twice as often (a few polls more, once).
 */
const TAIL_SHARE = 0.25;

/**
 * How much later than the pace's poll a parked slot's stall decision may fall for the poll to wait
 * for it (a share of the pace's sleep): the pace looks when half the queue can have ended, so a
 * quarter of that more leaves the queue still covering.
 */
const MERGE_SHARE = 0.5;

/** The poll planned at `poll` waits for a stall decision due at `decision`. */
export function mergeWithDecision(now: number, poll: number, decision: number): boolean {
  return decision > poll && decision - poll <= MERGE_SHARE * (poll - now);
}

export interface PaceInput {
  /** Migrations submitted and not seen to end. */
  readonly inFlight: number;
  readonly now: number;
  /** The nearest moment something is due on our side (a retry, the end of an abort's grace), from now. */
  readonly dueIn?: number | undefined;
  /** Nothing is left to submit. */
  readonly tail?: boolean;
  /** Of the host's `of` slots, how many hold no parked migration (default: all). */
  readonly working?: { readonly slots: number; readonly of: number };
}

export class Pace {
  readonly #maxMs: number;
  readonly #minMs: number;
  /** The ends, on the working clock. */
  readonly #ends: number[] = [];
  readonly #work = new WorkClock();
  #lastMs = 0;

  constructor(pollIntervalMs: number) {
    this.#maxMs = pollIntervalMs;
    this.#minMs = Math.min(pollIntervalMs, MIN_POLL_MS);
  }

  /** A migration ended (success or failure) at `at`, in the order they are seen. */
  ended(at: number): void {
    this.#ends.push(this.#work.workAt(at));
    this.#ends.sort((a, b) => a - b);
    if (this.#ends.length > WINDOW) this.#ends.shift();
  }

  /** Mean working time between two ends on this host, once two were seen. */
  get gapMs(): number | undefined {
    const n = this.#ends.length;
    if (n < 2) return undefined;
    const span = this.#ends[n - 1]! - this.#ends[0]!;
    return span > 0 ? span / (n - 1) : undefined;
  }

  /** The sleep before the next poll. */
  next({ inFlight, now, dueIn, tail = false, working }: PaceInput): number {
    if (working) this.#work.set(now, working.slots, working.of);
    const share = tail ? TAIL_SHARE : SHARE;
    // working time runs this much slower than ours: no slot working, no end to poll for but the due ones
    const rate = this.#work.rate;
    let ms: number;
    const gap = this.gapMs;
    if (rate === 0 && this.#ends.length > 0) ms = this.#maxMs;
    else if (gap !== undefined && inFlight > 0) ms = (share * inFlight * gap) / rate;
    else if (this.#ends.length === 1 && inFlight > 0) {
      // One end seen: no second one since, so the gap is at least the time since it. Doubling on
      // would overshoot a queue that short copies drain; this grows only as the evidence does.
      ms = Math.max(this.#lastMs, (share * inFlight * (this.#work.workAt(now) - this.#ends[0]!)) / rate);
    } else ms = Math.max(this.#minMs, 2 * this.#lastMs);
    if (dueIn !== undefined) ms = Math.min(ms, Math.max(0, dueIn));
    const floor = tail ? Math.min(this.#minMs, TAIL_MIN_POLL_MS) : this.#minMs;
    ms = Math.min(this.#maxMs, Math.max(floor, ms));
    this.#lastMs = ms;
    return ms;
  }
}

export interface EndSeen {
  /** This poll, on our clock. */
  readonly now: number;
  /** The poll before it, which still saw the server moving (our clock). */
  readonly since: number | undefined;
  /** Nova's clock as this poll's answer showed it. */
  readonly novaNow: number | undefined;
  /** The server's `updated` (ISO 8601, Nova's clock): its last change, the end of the migration. */
  readonly updated: string | undefined;
}

/**
 * When a migration ended, on our clock: how long ago Nova says it changed the server, read against
 * Nova's clock in the same answer (so a skew between the clocks cancels), kept between the poll that
 * saw the end and the one before. Without what it needs: this poll.
 */
export function endedAt({ now, since, novaNow, updated }: EndSeen): number {
  const at = updated ? Date.parse(updated) : NaN;
  if (Number.isNaN(at) || novaNow === undefined || since === undefined) return now;
  return Math.min(now, Math.max(since, now - (novaNow - at)));
}
