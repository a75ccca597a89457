// Submitting one server's move (live or cold), and what Nova's refusal of it means.
import {
  isAuthError,
  isConflictError,
  isForbiddenError,
  isNotFoundError,
  isOutcomeUnknownError,
} from '../../errors.ts';
import { classify, type MoveAction } from './classify.ts';
import type { Entry } from './entry.ts';
import type { MigratorOptions } from './migrator-options.ts';
import { readBack } from './read-back.ts';
import type { Tracker } from './track.ts';

export type StartAction = Exclude<MoveAction, 'confirm-resize' | 'stop'>;

export interface StartParts {
  tracker: Tracker;
  /** Is one of Nova's slots free for this move (else a live one queues behind them)? */
  slotFree: boolean;
  /** The attempt holds a slot from now (its deadline starts). */
  slotFrom(e: Entry, now: number): void;
}

export async function startMove(
  o: MigratorOptions,
  p: StartParts,
  e: Entry,
  action: StartAction,
): Promise<void> {
  const { compute, signal, log } = o;
  const now = o.now();
  const { slotFree } = p;
  await o.beforeStart(e.id, {
    attempts: e.attempts + 1,
    startedAt: new Date(e.startedAt ?? now).toISOString(),
  });
  try {
    if (action === 'live-migrate') await compute.liveMigrate(e.id, signal);
    else await compute.migrate(e.id, signal);
  } catch (err) {
    if (signal.aborted || isAuthError(err) || isForbiddenError(err)) throw err;
    if (isNotFoundError(err)) {
      e.finish('skipped', now, 'deleted during the evacuation');
      return;
    }
    if (isOutcomeUnknownError(err)) {
      // Never sent again blindly: read back whether Nova took it, then decide.
      const back = await readBack(o, e, action, now);
      if (back.took === 'took' && (slotFree || action !== 'live-migrate')) p.slotFrom(e, now);
      if (back.took === 'not-taken') p.tracker.failedAttempt(e, now, `${err.message}; ${back.detail}`);
      return;
    }
    e.started(action, now);
    if (isConflictError(err)) {
      // Not retried: the server changed under us. If a migration is running, it is ours to track.
      const s = await compute.getServer(e.id, signal).catch(() => e.server);
      const v = classify(s, o.nova);
      if (v.kind === 'in-progress') {
        // ours did not start: someone else's (its owner's resize) is followed, not counted ours
        e.byOthers = true;
        e.attempts -= 1;
        e.tries -= 1;
        return;
      }
      if (v.kind === 'wait') {
        // its owner acts on it (a shelve, a stop): no attempt of ours; decided again once that ends
        e.attempts -= 1;
        e.tries -= 1;
        e.wait(`${v.reason} (its owner's, met as Nova's 409 to ${action}); decided again once it ends`, now);
        log.info(
          { server: e.id, action, reason: v.reason },
          'Nova refused the move: someone acts on the server',
        );
        return;
      }
      const refused = `Nova refused ${action}: ${(err as Error).message}`;
      e.finish(
        'failed',
        now,
        e.last ? `in ERROR, stays on ${o.source}: ${refused} (reset its state or move it by hand)` : refused,
      );
      return;
    }
    p.tracker.failedAttempt(e, now, (err as Error).message);
    return;
  }
  e.started(action, now);
  // A cold migration is never queued behind a slot; a live one is when the window is full.
  if (slotFree || action !== 'live-migrate') p.slotFrom(e, now);
  else e.recordCheckAt = undefined; // queued: nothing to check until it holds a slot
  log.info({ server: e.id, name: e.name, action, attempt: e.attempts }, 'migration started');
}
