// Retries a write that hit a transient API error (503, connection reset): the record must reach
// the Node even through a short API outage, or a restarted agent would not know what we did.
import { isTransientError } from '../../errors.ts';

export interface RetryOptions {
  readonly signal: AbortSignal;
  /** Give up after this long (ms) and let the error through (default 60 s). */
  readonly budgetMs?: number;
  readonly initialMs?: number;
  readonly maxMs?: number;
}

/** Resolves after `ms`, or at once when the signal aborts (never rejects). */
export const wait = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

export async function retryTransient<T>(fn: () => Promise<T>, o: RetryOptions): Promise<T> {
  const end = Date.now() + (o.budgetMs ?? 60_000);
  let delay = o.initialMs ?? 200;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransientError(err) || o.signal.aborted || Date.now() + delay > end) throw err;
      await wait(delay, o.signal);
      delay = Math.min(o.maxMs ?? 5000, delay * 2);
    }
  }
}
