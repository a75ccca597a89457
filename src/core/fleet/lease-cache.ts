// The Leases of the fleet namespace as one watch keeps them: read without a request, and a
// wait that ends when one of them changes holder (renewals alone wake nobody). Every event is an
// observation (observed.ts): a holder's renewal is timed when the watch brings it, on our clock.
import { monotonicMs, ObservedLeases } from './observed.ts';
import type { FleetApi, LeaseView } from './types.ts';

/**
 * How long the opened watch must stay quiet before its first events count as in (ms): the existing
 * Leases come together right after the stream opens, so once one is in the rest follow at once.
 */
const FIRST_EVENTS_QUIET_MS = { none: 100, after: 10 };
/** The longest a first read waits for the watch (ms): an API that is down does not block the wait. */
const FIRST_EVENTS_MAX_MS = 5000;

export class LeaseCache {
  readonly #api: FleetApi;
  readonly #signal: AbortSignal;
  /** The watch is open and its first events are in (or we stopped waiting for them). */
  #ready: Promise<void> | undefined;
  /** While the first events come in: re-arms the quiet timer. */
  #settle: (() => void) | undefined;
  /** While the first events come in: re-arms the quiet timer. */ readonly #leases = new Map<
    string,
    LeaseView
  >();
  readonly #waiters = new Set<() => void>();
  /** Bumped on every holder change; with the holders each change brought (the last few hundred). */
  #version = 0;
  readonly #held: { version: number; holder: string }[] = [];
  /**
   * Times the watch stream opened: a re-open means a gap (a dropped connection) in which changes
   * may have been missed until its first events came.
   */
  #opens = 0;
  /** When this process saw each Lease's record change: what expiry is judged by. */
  readonly observed: ObservedLeases;

  constructor(api: FleetApi, signal: AbortSignal, monotonic: () => number = monotonicMs) {
    this.#api = api;
    this.#signal = signal;
    this.observed = new ObservedLeases(monotonic);
  }

  /**
   * The Leases as the watch knows them. The first call (the agent's first wait for a slot) opens
   * the one watch, which stays open for the agent's life: later waits cost no list or watch.
   * The view may lack a Lease (no marker ends the watch's initial ADDED events): decisions made on
   * it are writes with a resourceVersion, and a 409 makes the budget read that Lease again.
   */
  async current(): Promise<LeaseView[]> {
    await (this.#ready ??= this.#open());
    return [...this.#leases.values()];
  }

  /** Opens the watch; resolves once the stream has been quiet a while after it opened. */
  #open(): Promise<void> {
    return new Promise((resolve) => {
      let quiet: NodeJS.Timeout | undefined;
      let open = false;
      let events = 0;
      const done = () => {
        clearTimeout(quiet);
        clearTimeout(cap);
        this.#signal.removeEventListener('abort', done);
        this.#settle = undefined;
        resolve();
      };
      const cap = setTimeout(done, FIRST_EVENTS_MAX_MS);
      this.#signal.addEventListener('abort', done, { once: true });
      // the existing Leases come first, right after the stream opens: each one re-arms the timer
      this.#settle = () => {
        if (!open) return;
        clearTimeout(quiet);
        quiet = setTimeout(done, events ? FIRST_EVENTS_QUIET_MS.after : FIRST_EVENTS_QUIET_MS.none);
      };
      this.#api.watchLeases(
        (type, lease) => {
          events++;
          this.#onEvent(type, lease);
        },
        () => {
          open = true;
          this.#opens++;
          this.#settle?.();
        },
        this.#signal,
      );
    });
  }

  #onEvent(type: string, lease: LeaseView): void {
    this.#settle?.();
    const before = this.#leases.get(lease.name);
    if (type === 'DELETED') this.#leases.delete(lease.name);
    else {
      this.#leases.set(lease.name, lease);
      this.observed.observe(lease);
    }
    if (type === 'DELETED' || before?.holder !== lease.holder || !before) {
      this.#version++;
      if (lease.holder && type !== 'DELETED')
        this.#held.push({ version: this.#version, holder: lease.holder });
      if (this.#held.length > 500) this.#held.splice(0, 250);
      this.#wake();
    }
  }

  get version(): number {
    return this.#version;
  }

  get opens(): number {
    return this.#opens;
  }

  /** Every node that took a slot after `version`. */
  holdersSince(version: number): string[] {
    return this.#held.filter((h) => h.version > version).map((h) => h.holder);
  }

  #wake(): void {
    const ws = [...this.#waiters];
    this.#waiters.clear();
    for (const w of ws) w();
  }

  /** Resolves true when a holder changed (since `seen`, so no change is missed), false after `ms` or on abort. */
  changed(ms: number, signal: AbortSignal, seen: number): Promise<boolean> {
    if (this.#version !== seen) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (changed: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        this.#waiters.delete(woken);
        resolve(changed);
      };
      const woken = () => done(true);
      const aborted = () => done(false);
      const timer = setTimeout(aborted, ms);
      signal.addEventListener('abort', aborted, { once: true });
      this.#waiters.add(woken);
    });
  }
}
