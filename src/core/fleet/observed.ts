// Lease expiry as client-go's leader election times it: never the local clock against the holder's
// renewTime (the holder's clock, on another machine), but our own observations. We remember when
// this process last saw a Lease's record change (holder, renewTime, resourceVersion), on our own
// monotonic clock, and treat the holder as gone only after its leaseDuration without a change.
// The price: a holder first seen is live for a lease duration, even if it died long before.
import type { LeaseView } from './types.ts';

interface Seen {
  key: string;
  /** Our monotonic ms when the record last changed (or was first seen). */
  at: number;
  /** Changes seen after the first sight (a renewal proves the holder alive). */
  changes: number;
}

const recordOf = (l: LeaseView): string =>
  JSON.stringify([l.holder ?? '', l.renewTime ?? '', l.resourceVersion ?? '']);

/** Our own clock, which no one sets: immune to NTP steps and to other machines' clocks. */
export const monotonicMs = (): number => performance.now();

export class ObservedLeases {
  readonly #seen = new Map<string, Seen>();
  readonly #now: () => number;

  constructor(monotonic: () => number = monotonicMs) {
    this.#now = monotonic;
  }

  /** Our monotonic ms now: what timers measured against these observations use. */
  now(): number {
    return this.#now();
  }

  /** Notes the Lease as read now; answers what has been seen of it. */
  observe(l: LeaseView): Readonly<Seen> {
    const key = recordOf(l);
    const s = this.#seen.get(l.name);
    if (!s) {
      const first = { key, at: this.#now(), changes: 0 };
      this.#seen.set(l.name, first);
      return first;
    }
    if (s.key !== key) {
      s.key = key;
      s.at = this.#now();
      s.changes++;
    }
    return s;
  }

  /** Ms of our time until the holder counts as gone (≤ 0: gone, or nobody holds it). */
  expiresIn(l: LeaseView, defaultSeconds: number): number {
    const s = this.observe(l);
    if (!l.holder) return 0;
    return s.at + (l.durationSeconds ?? defaultSeconds) * 1000 - this.#now();
  }

  /** A Lease nobody holds, or whose record has not changed for its duration of our time. */
  expired(l: LeaseView, defaultSeconds: number): boolean {
    return this.expiresIn(l, defaultSeconds) < 0 || !l.holder;
  }
}
