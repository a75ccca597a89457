// When to look at Nova next. Migrations submitted ahead sit in Nova's queue for the source host, so
// the drainer need not notice an end at once: only before that queue runs dry. The pace learns how
// often migrations end on this host and looks again when about half of what is in flight can have
// ended; before it knows, it starts quick and doubles. nova.pollInterval is the upper bound.

/** The quickest poll (or pollInterval when that is shorter). */
export const MIN_POLL_MS = 1000;
/** Ends remembered for the rate: recent enough to follow a change in the mix. */
const WINDOW = 20;
/** Look again when this share of the in-flight work can have ended. */
const SHARE = 0.5;
/**
 * With nothing left to submit no queue covers for us: the evacuation ends when the last end is
 * noticed, so look twice as often (a few polls more, once).
 */
const TAIL_SHARE = 0.25;

export class Pace {
  readonly #maxMs: number;
  readonly #minMs: number;
  readonly #ends: number[] = [];
  #lastMs = 0;

  constructor(pollIntervalMs: number) {
    this.#maxMs = pollIntervalMs;
    this.#minMs = Math.min(pollIntervalMs, MIN_POLL_MS);
  }

  /** A migration was seen to end (success or failure) at `at`. */
  ended(at: number): void {
    this.#ends.push(at);
    if (this.#ends.length > WINDOW) this.#ends.shift();
  }

  /** Mean time between two ends on this host, once two were seen. */
  get gapMs(): number | undefined {
    const n = this.#ends.length;
    if (n < 2) return undefined;
    const span = this.#ends[n - 1]! - this.#ends[0]!;
    return span > 0 ? span / (n - 1) : undefined;
  }

  /**
   * The sleep before the next poll with `inFlight` migrations submitted; `dueIn` is the nearest
   * moment something is due on our side (a retry, the end of an abort's grace), if any; `tail`
   * when nothing is left to submit.
   */
  next(inFlight: number, dueIn?: number, tail = false): number {
    const gap = this.gapMs;
    const share = tail ? TAIL_SHARE : SHARE;
    let ms =
      gap !== undefined && inFlight > 0 ? share * inFlight * gap : Math.max(this.#minMs, 2 * this.#lastMs);
    if (dueIn !== undefined) ms = Math.min(ms, Math.max(0, dueIn));
    ms = Math.min(this.#maxMs, Math.max(this.#minMs, ms));
    this.#lastMs = ms;
    return ms;
  }
}
