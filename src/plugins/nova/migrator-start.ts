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
import { hostOf, type NovaServer } from './types.ts';
import { ownCalls, whoseMove } from './whose.ts';

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
  await o.beforeStart(e.id, {
    attempts: e.attempts + 1,
    startedAt: new Date(e.startedAt ?? now).toISOString(),
    move: action,
  });
  let request: string | undefined;
  try {
    request =
      action === 'live-migrate'
        ? await compute.liveMigrate(e.id, signal)
        : await compute.migrate(e.id, signal);
  } catch (err) {
    if (signal.aborted || isAuthError(err) || isForbiddenError(err)) throw err;
    if (isNotFoundError(err)) {
      e.finish('skipped', now, 'deleted during the evacuation');
      return;
    }
    if (isOutcomeUnknownError(err)) {
      // Never sent again blindly: read back whether Nova took it, then decide. Until that is known,
      // a move Nova shows may be this call's (a 409 to a later one is resolved by whose.ts).
      e.lostCall = { action, at: now };
      const back = await readBack(o, e, action, now);
      if (back.took === 'took') e.lostCall = undefined; // Nova shows it took: this call's move
      if (back.took === 'took' && (p.slotFree || action !== 'live-migrate')) p.slotFrom(e, now);
      if (back.took === 'not-taken') p.tracker.failedAttempt(e, now, `${err.message}; ${back.detail}`);
      return;
    }
    if (isConflictError(err)) {
      await conflicted(o, p, e, action, err.message);
      return;
    }
    e.started(action, now);
    p.tracker.failedAttempt(e, now, (err as Error).message);
    return;
  }
  e.lostCall = undefined;
  if (request) e.requests.add(request);
  e.started(action, now);
  // A cold migration is never queued behind a slot; a live one is when the window is full.
  if (p.slotFree || action !== 'live-migrate') p.slotFrom(e, now);
  else e.recordCheckAt = undefined; // queued: nothing to check until it holds a slot
  log.info({ server: e.id, name: e.name, action, attempt: e.attempts }, 'migration started');
}

/**
 * Nova refused the move (409): the server changed under us, and the call is not retried. A move
 * running on it now is followed: drainer's own (an earlier call whose answer was lost, whose.ts),
 * or someone else's (its owner's resize), whose end is theirs. Another task of its owner's (a
 * shelve, a stop) is waited for. Unread, nothing is concluded: the next poll decides again.
 */
async function conflicted(
  o: MigratorOptions,
  p: StartParts,
  e: Entry,
  action: StartAction,
  message: string,
): Promise<void> {
  const { compute, signal, log } = o;
  const now = o.now();
  let s: NovaServer;
  try {
    s = await compute.getServer(e.id, signal);
  } catch (err) {
    if (signal.aborted || isAuthError(err) || isForbiddenError(err)) throw err;
    if (isNotFoundError(err)) e.finish('skipped', now, 'deleted during the evacuation');
    else
      log.warn(
        { err, server: e.id },
        'Nova refused the move (409), and the server could not be read: decided again',
      );
    return;
  }
  e.server = s;
  const v = classify(s, o.nova);
  if (v.kind === 'in-progress') {
    const ours = (await whoseMove(o, e.id, v.action, ownCalls(e))) === 'ours';
    e.started(v.action, now);
    if (ours) {
      // drainer's own earlier call, whose answer was lost: Nova took it, and this attempt is it
      e.lostCall = undefined;
      if (p.slotFree || v.action !== 'live-migrate') p.slotFrom(e, now);
      log.info(
        { server: e.id, action: v.action },
        "Nova refused the move (409): it runs drainer's earlier call",
      );
      return;
    }
    // ours did not start: someone else's (its owner's resize) is followed, not counted ours
    e.byOthers = true;
    e.attempts -= 1;
    e.tries -= 1;
    return;
  }
  e.started(action, now);
  // Changed since the listing: its owner acts on it (a shelve, a stop), or their resize has landed
  // (elsewhere, or here waiting for a confirm). No attempt of ours; decided again from what it shows.
  if (v.kind !== 'move' || v.action !== action || hostOf(s) !== o.source) {
    e.attempts -= 1;
    e.tries -= 1;
    const why = v.kind === 'wait' ? v.reason : `now ${s.status} on ${hostOf(s) ?? '?'}`;
    e.wait(`${why} (its owner's, met as Nova's 409 to ${action}); decided again`, now);
    log.info({ server: e.id, action, reason: why }, 'Nova refused the move: someone acts on the server');
    return;
  }
  const refused = `Nova refused ${action}: ${message}`;
  e.finish(
    'failed',
    now,
    e.last ? `in ERROR, stays on ${o.source}: ${refused} (reset its state or move it by hand)` : refused,
  );
}
