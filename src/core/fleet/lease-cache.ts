// The Leases of the fleet namespace as one watch keeps them: read without a request, and a
// wait that ends when one of them changes holder (renewals alone wake nobody).
import type { FleetApi, LeaseView } from './types.ts';

export class LeaseCache {
  readonly #api: FleetApi;
  readonly #signal: AbortSignal;
  #started = false;
  #synced = false;
  readonly #leases = new Map<string, LeaseView>();
  readonly #waiters = new Set<() => void>();

  constructor(api: FleetApi, signal: AbortSignal) {
    this.#api = api;
    this.#signal = signal;
  }

  /** The Leases: from the watch once it has synced, else (or when `fresh`) one list. */
  async current(fresh = false): Promise<LeaseView[]> {
    if (!this.#started) {
      this.#started = true;
      this.#api.watchLeases(
        (type, lease) => this.#onEvent(type, lease),
        () => {
          this.#synced = true;
        },
        this.#signal,
      );
    }
    if (this.#synced && !fresh) return [...this.#leases.values()];
    return this.#api.listLeases();
  }

  #onEvent(type: string, lease: LeaseView): void {
    const before = this.#leases.get(lease.name);
    if (type === 'DELETED') this.#leases.delete(lease.name);
    else this.#leases.set(lease.name, lease);
    if (type === 'DELETED' || before?.holder !== lease.holder || !before) this.#wake();
  }

  #wake(): void {
    const ws = [...this.#waiters];
    this.#waiters.clear();
    for (const w of ws) w();
  }

  /** Resolves when a holder changed, after `ms`, or on abort. */
  changed(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.#waiters.add(done);
    });
  }
}
