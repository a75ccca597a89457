// Node mode manual (drainer.dev/migration-mode=manual), whatever the backend: the operator moves the
// workloads with their own tools and drainer only watches the host until none is left on it.
import type { EvacuationContext } from './plugin.ts';

export interface ManualWait<T> {
  /** What is still on the host. */
  readonly list: (signal: AbortSignal) => Promise<T[]>;
  /** Whether a failed listing is tried again at the next poll (else it ends the wait). */
  readonly retryable: (err: unknown) => boolean;
  /** The warning logged when a listing fails and is tried again. */
  readonly listFailed: string;
  /** Called with what is left after each listing (the backend remembers and reports it). */
  readonly listed: (left: readonly T[]) => void;
  readonly now: () => number;
  /** Waits one poll interval. */
  readonly sleep: (signal: AbortSignal) => Promise<void>;
}

/**
 * Lists the host each poll until nothing is left on it, the deadline passes or the signal aborts;
 * returns what was left at the last listing that succeeded.
 */
export async function waitUntilEmpty<T>(o: ManualWait<T>, ctx: EvacuationContext): Promise<T[]> {
  let left: T[] = [];
  while (!ctx.signal.aborted) {
    try {
      left = await o.list(ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted || !o.retryable(err)) throw err;
      ctx.log.warn({ err }, o.listFailed);
    }
    o.listed(left);
    if (left.length === 0) break;
    if (o.now() >= ctx.deadline.getTime()) break;
    await o.sleep(ctx.signal).catch(() => undefined);
  }
  return left;
}
