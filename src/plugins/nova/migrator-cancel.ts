// The end of an evacuation that did not finish: a cancel (uncordon) takes back what it can; a
// shutdown leaves every submitted migration to Nova, where the next agent adopts it from the record
// (aborting would make it submit them again).
import { isNotFoundError } from '../../errors.ts';
import type { Entry } from './entry.ts';
import type { MigratorOptions } from './migrator-options.ts';
import { HOST_UNKNOWN, knownHost, novaSays } from './reasons.ts';
import type { Tracker } from './track.ts';
import { taskStateOf } from './types.ts';

const SETTLED = new Set(['ACTIVE', 'PAUSED', 'SHUTOFF']);
/** The calls made after the evacuation's own signal fired. */
const cleanupSignal = () => AbortSignal.timeout(30_000);

export function leave(entries: readonly Entry[]): void {
  for (const e of entries)
    if (e.state === 'migrating') e.message = 'shut down: left to Nova, the next agent follows it';
}

/**
 * Only drainer's own live migrations are aborted (abortOnCancel, or queued and not started). Someone
 * else's move is theirs; a cold migration cannot be stopped: it is followed to where it lands and
 * its resize confirmed, so the uncordon leaves no server waiting in VERIFY_RESIZE.
 */
export async function cancel(o: MigratorOptions, tracker: Tracker, entries: readonly Entry[]): Promise<void> {
  const moving = entries.filter((e) => e.state === 'migrating');
  for (const e of moving) {
    if (e.byOthers) {
      e.message = "cancelled: someone else's move, left to them";
      continue;
    }
    if (e.action !== 'live-migrate') continue; // followed below
    // Submitted ahead and not started: nothing to lose, so it is aborted whatever abortOnCancel
    // says (Nova aborts queued live migrations from 2.65; below, none were submitted ahead).
    const queued = e.deadlineFrom === undefined && o.compute.atLeast(65);
    if (e.abort) {
      const note = `cancelled after its deadline (${e.abort.note})`;
      if ((await tracker.afterCancel(e, note)) === 'stayed') e.finish('failed', o.now(), note);
    } else if (o.abortOnCancel || queued) {
      const { sent, note } = await tracker.abort(e);
      if (sent && e.migrationId !== undefined) await tracker.abortSettled(e, e.migrationId);
      const after = await tracker.afterCancel(e, `the cancel came too late: ${note}`);
      // still being scheduled, nothing to abort yet: not a failure, Nova moves it on its own
      if (after === 'moving')
        e.message = `cancelled (${note}): Nova goes on with it, left to finish on its own`;
      else if (after === 'stayed') e.finish('failed', o.now(), `cancelled (${note})`);
    } else {
      e.message = 'cancelled: left to finish on its own';
    }
  }
  await followCold(
    o,
    tracker,
    moving.filter((e) => e.state === 'migrating' && !e.byOthers && e.action === 'cold-migrate'),
  );
  for (const e of entries) if (e.state === 'pending') e.message = 'cancelled before it started';
}

/**
 * How long a cancel follows drainer's cold migrations: the host abandons a plugin that has not
 * returned 30 s after its signal; what still moves then, restore follows and confirms (confirm-left.ts).
 */
const FOLLOW_COLD_MS = 20_000;

/** drainer's cold migrations, polled until they land and are confirmed, for a little while. */
async function followCold(o: MigratorOptions, tracker: Tracker, cold: readonly Entry[]): Promise<void> {
  const until = o.now() + Math.min(FOLLOW_COLD_MS, o.nova.migrationTimeout * 1000);
  let left = cold;
  while (left.length > 0) {
    for (const e of left) await look(o, tracker, e);
    left = left.filter((e) => !e.terminal);
    if (left.length === 0 || o.now() >= until) break;
    const nap = Math.min(o.nova.pollInterval * 1000, until - o.now());
    await o.sleep(nap, new AbortController().signal);
  }
  for (const e of left)
    e.message =
      'cancelled: Nova still moves it (a cold migration cannot be stopped); restore confirms its resize once it lands';
}

async function look(o: MigratorOptions, tracker: Tracker, e: Entry): Promise<void> {
  const now = o.now();
  try {
    e.server = await o.compute.getServer(e.id, cleanupSignal());
  } catch (err) {
    if (isNotFoundError(err)) e.finish('skipped', now, 'deleted during the evacuation');
    return; // unread: looked at again
  }
  const s = e.server;
  if (taskStateOf(s) !== null) return;
  const host = knownHost(s);
  const why = 'the uncordon came during its cold migration, which cannot be stopped';
  if (s.status === 'VERIFY_RESIZE') await tracker.confirm(e, cleanupSignal());
  else if (s.status === 'ERROR')
    e.finish('failed', now, `server went to ERROR during cold-migrate${novaSays(s)}`);
  else if (!SETTLED.has(s.status)) return;
  else if (host === undefined) e.finish('failed', now, HOST_UNKNOWN);
  else if (host !== o.source) {
    e.target = host;
    e.finish('succeeded', now, `moved (${why})`);
  } else e.finish('failed', now, `cold-migrate ended with the server still on ${o.source} (${why})`);
}
