// After a migrate call whose answer was lost (OutcomeUnknownError): did Nova take it? Nova's API
// sets the server's task_state before it answers 202, so one read of the server tells: busy with
// a migration, or already on another host (or resized), means it took and is followed like any
// started one; idle on the source means it did not (or failed at once: its migration records say
// which), which the caller counts as a failed attempt, tried again after the backoff. Never a
// second call in the dark.
import { isAuthError, isNotFoundError } from '../../errors.ts';
import type { MoveAction } from './classify.ts';
import type { Entry } from './entry.ts';
import type { MigratorOptions } from './migrator-options.ts';
import { knownHost } from './reasons.ts';
import { CLOCK_SKEW_MS, newestRecord } from './records.ts';
import { taskStateOf } from './types.ts';

export type ReadBack = { took: 'took' | 'gone' } | { took: 'not-taken'; detail: string };

export async function readBack(
  o: Pick<MigratorOptions, 'compute' | 'source' | 'signal' | 'log'>,
  e: Entry,
  action: Exclude<MoveAction, 'confirm-resize'>,
  now: number,
): Promise<ReadBack> {
  try {
    e.server = await o.compute.getServer(e.id, o.signal);
  } catch (err) {
    if (!isNotFoundError(err)) throw err;
    e.finish('skipped', now, 'deleted during the evacuation');
    return { took: 'gone' };
  }
  const s = e.server;
  const host = knownHost(s);
  const took =
    taskStateOf(s) !== null || s.status === 'VERIFY_RESIZE' || (host !== undefined && host !== o.source);
  e.started(action, now);
  o.log.warn(
    { server: e.id, action, took, status: s.status, task: taskStateOf(s) },
    took
      ? `the answer to ${action} was lost, but Nova took it: following the migration`
      : `the answer to ${action} was lost and Nova shows no migration: not sent again now`,
  );
  return took ? { took: 'took' } : { took: 'not-taken', detail: await newestDetail(o, e, action, now) };
}

/** The server's newest migration record of this kind, as a clause: did it take and fail at once? */
async function newestDetail(
  o: Pick<MigratorOptions, 'compute' | 'source' | 'signal'>,
  e: Entry,
  action: string,
  now: number,
): Promise<string> {
  try {
    const records = await o.compute.listHostMigrations(o.source, new Date(now - CLOCK_SKEW_MS), o.signal);
    const r = newestRecord(records, e.id, action);
    return r ? `Nova's newest migration record for it: ${r.id} ${r.status}` : 'Nova shows no migration';
  } catch (err) {
    if (o.signal.aborted || isAuthError(err)) throw err;
    return 'Nova shows no migration in progress';
  }
}
