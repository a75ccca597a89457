// The Leases of the fleet namespace as one watch keeps them: read without a request, and a
// wait that ends when one of them changes holder (renewals alone wake nobody).
import type { FleetApi, LeaseView } from './types.ts';

export class LeaseCache {
  readonly #api: FleetApi;
  readonly #signal: AbortSignal;
  #started = false;
  #synced = false;
  #onSynced: (() => void) | undefined;
  readonly #leases = new Map<string, LeaseView>();
  readonly #waiters = new Set<() => void>();
  /** Bumped on every holder change; with the holders each change brought (the last few hundred). */
  #version = 0;
  readonly #held: { version: number; holder: string }[] = [];

  constructor(api: FleetApi, signal: AbortSignal) {
    this.#api = api;
    this.#signal = signal;
  }

  /** Opens the one watch (once; later calls do nothing). */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#api.watchLeases(
      (type, lease) => this.#onEvent(type, lease),
      () => {
        this.#synced = true;
        this.#onSynced?.();
      },
      this.#signal,
    );
  }

  /** The Leases: from the watch once it has synced, else (or when `fresh`) one list. */
  async current(fresh = false): Promise<LeaseView[]> {
    this.start();
    // the watch's own first list is as fresh as one of ours: wait for it (a while) instead
    if (!this.#synced) await this.#firstSync(5000);
    if (this.#synced && !fresh) return [...this.#leases.values()];
    return this.#api.listLeases();
  }

  #firstSync(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#onSynced = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  #onEvent(type: string, lease: LeaseView): void {
    const before = this.#leases.get(lease.name);
    if (type === 'DELETED') this.#leases.delete(lease.name);
    else this.#leases.set(lease.name, lease);
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
