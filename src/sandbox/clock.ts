// Time for the simulated controllers. Durations in a scenario are "simulated" milliseconds;
// a scale of 10 makes them pass ten times faster in real time, so tests run quickly while
// every ratio between durations stays the same. What is stamped on objects is real time, as a
// real API server's stamps are (so kubectl ages read true in a kept sandbox): a scenario moment is
// stamped at its real moment (wallOf), and a stamp is weighed against now() at its scenario moment
// (fromWall).

export interface Clock {
  /** Simulated epoch milliseconds. */
  now(): number;
  /** Resolves after `ms` simulated milliseconds (rejects with the signal's reason when aborted). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Runs fn after `ms` simulated milliseconds; returns a cancel function. */
  after(ms: number, fn: () => void): () => void;
  /** The real epoch milliseconds of a simulated moment: what an object is stamped with for it. */
  wallOf(simMs: number): number;
  /** The simulated moment of a real-time stamp, to weigh it against now(). */
  fromWall(wallMs: number): number;
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
    return this.fromWall(Date.now());
  }

  wallOf(simMs: number): number {
    return this.#realStart + (simMs - this.#simStart) / this.scale;
  }

  fromWall(wallMs: number): number {
    return this.#simStart + (wallMs - this.#realStart) * this.scale;
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
