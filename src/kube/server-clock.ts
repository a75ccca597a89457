// The API server's clock, as its answers tell it: every response carries a Date header (whole
// seconds, RFC 9110). One answer places the server's time within a second plus the round trip; each
// further one narrows that, as its second boundary falls elsewhere. The fleet queue is ordered by
// this clock, not by each agent's own, which may be off by any amount (issue 48 item 5).

/** How fast two machines' clocks may drift apart: what is known ages by this much (100 ppm). */
const DRIFT = 1e-4;

export class ServerClock {
  /** The server's time minus our monotonic time: within [lo, hi] at `at` (monotonic ms). */
  #lo = -Infinity;
  #hi = Infinity;
  #at = 0;
  readonly #monotonic: () => number;

  /** `monotonic`: our own clock, never stepped (default performance.now). */
  constructor(monotonic: () => number = () => performance.now()) {
    this.#monotonic = monotonic;
  }

  /** Our monotonic time now (the request's start and its answer's arrival are taken on it). */
  mark(): number {
    return this.#monotonic();
  }

  /**
   * An answer whose Date header says `date`, for a request sent at `sent` and answered at
   * `received` (both from mark()). The server wrote the header in between, within that second.
   */
  observe(date: string | undefined, sent: number, received: number): void {
    const second = date ? Date.parse(date) : NaN;
    if (Number.isNaN(second)) return;
    const lo = second - received;
    const hi = second + 1000 - sent;
    const aged = (received - this.#at) * DRIFT;
    const keptLo = Math.max(this.#lo - aged, lo);
    const keptHi = Math.min(this.#hi + aged, hi);
    // a server whose clock was stepped: what was known no longer holds, start again from this answer
    [this.#lo, this.#hi] = keptLo <= keptHi ? [keptLo, keptHi] : [lo, hi];
    this.#at = received;
  }

  /** The server's time now, at the middle of what is known; undefined before any answer. */
  now(): Date | undefined {
    if (!Number.isFinite(this.#lo) || !Number.isFinite(this.#hi)) return undefined;
    return new Date(Math.round(this.#monotonic() + (this.#lo + this.#hi) / 2));
  }

  /** How far now() may be off, ms (half the width of what is known). */
  uncertainty(): number {
    return (this.#hi - this.#lo) / 2;
  }
}
