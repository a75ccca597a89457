// Following an evacuation's migrations: poll them, let the external controller and the evictions
// start what has not started, report progress, until every mover is done or the signal aborts.
import type { EvacuationContext, WorkloadProgress } from '../../core/backends/plugin.ts';
import { isTransientError } from '../../errors.ts';
import type { ExternalController } from './external.ts';
import type { Tracker } from './tracker.ts';
import type { Triggers } from './triggers.ts';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** A sleep that resolves early when the signal aborts. */
export const defaultSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

export interface FollowDeps {
  readonly tracker: Tracker;
  readonly triggers: Triggers;
  readonly external: ExternalController;
  /** Evictions start at `from` (the plugin's clock), for the VMIs `may` allows. */
  readonly evict: { readonly from: number; readonly may: (key: string) => boolean };
  readonly now: () => number;
  readonly sleep: Sleep;
  readonly pollMs: number;
  /** Every VMI's progress as it stands. */
  readonly progress: () => WorkloadProgress[];
}

/** Polls until every mover has moved, failed or timed out, or the signal aborts. */
export async function follow(deps: FollowDeps, ctx: EvacuationContext): Promise<void> {
  const { tracker, triggers, external, evict } = deps;
  while (!ctx.signal.aborted && tracker.pending().length > 0 && Date.now() < ctx.deadline.getTime()) {
    try {
      // poll first: a resumed evacuation must see the migrations already running
      await tracker.poll(ctx.signal);
      await external.migrate(tracker, ctx.signal);
      if (deps.now() >= evict.from) {
        await triggers.evict(
          tracker
            .notStarted()
            .filter(evict.may)
            .map((k) => tracker.vmi(k)),
          ctx.signal,
        );
      }
    } catch (err) {
      if (ctx.signal.aborted) return;
      if (!isTransientError(err)) throw err;
      ctx.log.warn({ err }, 'Kubernetes API trouble while following the migrations; trying again');
    }
    ctx.progress(deps.progress());
    if (tracker.pending().length === 0) return;
    try {
      await deps.sleep(deps.pollMs, ctx.signal);
    } catch {
      return; // a sleep that rejects on abort
    }
  }
}
