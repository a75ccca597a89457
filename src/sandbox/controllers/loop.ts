// Coalescing trigger: many store events in one tick cause one reconcile on the next tick.
// Running later (not inside the store's callback) keeps our writes out of the store's notify loop.

export interface Loop {
  trigger(): void;
}

export function createLoop(run: () => void, signal: AbortSignal, onError: (e: unknown) => void): Loop {
  let scheduled = false;
  const tick = () => {
    scheduled = false;
    if (signal.aborted) return;
    try {
      run();
    } catch (e) {
      onError(e);
    }
  };
  return {
    trigger() {
      if (scheduled || signal.aborted) return;
      scheduled = true;
      setImmediate(tick);
    },
  };
}

/** Subscribes to each resource, triggering the loop; unsubscribes when the signal aborts. */
export function watchAll(
  subscribe: (res: string, fn: () => void) => () => void,
  resources: readonly string[],
  loop: Loop,
  signal: AbortSignal,
): void {
  const offs: (() => void)[] = [];
  for (const r of resources) {
    try {
      offs.push(subscribe(r, () => loop.trigger()));
    } catch {
      // Not served (a CRD that is not installed): nothing to watch.
    }
  }
  signal.addEventListener('abort', () => offs.forEach((off) => off()), { once: true });
}

/** Timers keyed by an id, all cancelled on abort; one per key at a time. */
export class Timers {
  readonly #cancels = new Map<string, () => void>();
  readonly #after: (ms: number, fn: () => void) => () => void;
  readonly #onError: (e: unknown) => void;

  /** A callback that throws is reported to onError: a timer must never crash the process. */
  constructor(
    after: (ms: number, fn: () => void) => () => void,
    signal: AbortSignal,
    onError: (e: unknown) => void = () => {},
  ) {
    this.#after = after;
    this.#onError = onError;
    signal.addEventListener('abort', () => this.clear(), { once: true });
  }

  has(key: string): boolean {
    return this.#cancels.has(key);
  }

  /** Schedules fn unless a timer for key is already pending. */
  set(key: string, ms: number, fn: () => void): void {
    if (this.#cancels.has(key)) return;
    const cancel = this.#after(ms, () => {
      this.#cancels.delete(key);
      try {
        fn();
      } catch (e) {
        this.#onError(e);
      }
    });
    this.#cancels.set(key, cancel);
  }

  cancel(key: string): void {
    this.#cancels.get(key)?.();
    this.#cancels.delete(key);
  }

  clear(): void {
    for (const c of this.#cancels.values()) c();
    this.#cancels.clear();
  }
}
