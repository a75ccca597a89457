// Time for the simulated controllers. Durations in a scenario are "simulated" milliseconds;
// a scale of 10 makes them pass ten times faster in real time, so tests run quickly while
// every ratio between durations stays the same.

export interface Clock {
  /** Simulated epoch milliseconds. */
  now(): number;
  /** Resolves after `ms` simulated milliseconds (rejects with the signal's reason when aborted). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Runs fn after `ms` simulated milliseconds; returns a cancel function. */
  after(ms: number, fn: () => void): () => void;
  readonly scale: number;
}

export class ScaledClock implements Clock {
  readonly scale: number;
  readonly #realStart = Date.now();
  readonly #simStart: number;

  constructor(scale = 1, simStart = Date.now()) {
    if (!(scale > 0)) throw new RangeError(`clock scale must be > 0, got ${scale}`);
    this.scale = scale;
    this.#simStart = simStart;
  }

  now(): number {
    return this.#simStart + (Date.now() - this.#realStart) * this.scale;
  }

  after(ms: number, fn: () => void): () => void {
    const t = setTimeout(fn, Math.max(0, ms / this.scale));
    t.unref();
    return () => clearTimeout(t);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const onAbort = () => {
        cancel();
        reject(signal?.reason as Error);
      };
      const cancel = this.after(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
