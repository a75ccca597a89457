// Exponential backoff with jitter, and an abortable sleep. Injectable so tests run in milliseconds.

export interface BackoffOptions {
  /** First delay (default 1 s). */
  readonly initialMs?: number;
  /** Cap (default 30 s). */
  readonly maxMs?: number;
  /** 0..1 source of randomness (default Math.random). */
  readonly random?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Delay before retry number `failures` (1-based): doubles up to the cap, then jittered into [d/2, d]. */
export function backoffDelay(failures: number, opts: BackoffOptions = {}): number {
  const initial = opts.initialMs ?? 1000;
  const max = opts.maxMs ?? 30_000;
  const base = Math.min(max, initial * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  const r = (opts.random ?? Math.random)();
  return Math.round(base * (0.5 + r / 2));
}

/** Resolves after ms; rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
