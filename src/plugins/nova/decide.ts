// What a server that is not migrating needs next, from its classification: finished (deleted,
// moved or shelved by someone else, host unknown), skipped, blocked, adopted, waiting, its owner asked
// (way out notify), or ready to move. Applied to its entry; the scheduler starts the ready ones.
import { classify } from './classify.ts';
import type { Entry } from './entry.ts';
import type { MigratorOptions } from './migrator-options.ts';
import { chosenWay, MAINTENANCE_KEY, type Way } from './policy.ts';
import { HOST_UNKNOWN, knownHost } from './reasons.ts';
import { hostOf, taskStateOf, type NovaServer } from './types.ts';
import type { Watch } from './watch.ts';
import { ownCalls, whoseMove, type MoveKind } from './whose.ts';

/** An offloaded server has no host: it left the hypervisor (its owner shelved it). */
const OFFLOADED = new Set(['SHELVED_OFFLOADED']);

/** Sets `e`'s state from what its server shows now (`e` is not migrating). */
export async function decide(o: MigratorOptions, watch: Watch, e: Entry, now: number): Promise<void> {
  const s = e.server;
  if (OFFLOADED.has(s.status)) {
    // shelved by its owner (offloaded at once with Nova's default shelved_offload_time 0): it has no
    // host any more, which is the owner's doing and not a host Nova hides from drainer
    e.finish('succeeded', now, 'shelved by its owner: offloaded, it left the host');
    return;
  }
  if (knownHost(s) === undefined && classify(s, o.nova).kind !== 'gone') {
    // Moved means seen moved: without the host nobody can tell, so nothing is started either.
    e.finish('failed', now, HOST_UNKNOWN);
    return;
  }
  if (hostOf(s) !== o.source) {
    // drainer's cold migration from before a restart, landed or landing: followed, and confirmed
    if (e.attempts > 0 && coldOnItsWay(s, o) && (await mine(o, e, 'cold-migrate'))) {
      e.byOthers = false;
      e.adopt('cold-migrate', now);
      o.log.info(
        { server: e.id },
        "adopting drainer's cold migration from an earlier run, to confirm its resize",
      );
      return;
    }
    // It left without us (someone else moved it): the host is emptier either way.
    e.target = hostOf(s) ?? undefined;
    e.finish('succeeded', now, e.attempts > 0 ? 'moved' : 'moved off the host by someone else');
    return;
  }
  const way = await notifyWay(o, e, now);
  if (way === 'asked') return;
  const v = classify(s, { ...o.nova, reboot: o.reboot, ...(way ? { way } : {}) });
  switch (v.kind) {
    case 'gone':
      e.finish('skipped', now, 'deleted');
      return;
    case 'stays':
      e.action = e.stopped ? 'stop' : 'skip';
      e.finish(
        'skipped',
        now,
        e.stopped ? 'stopped on the host for the declared reboot; started again on restore' : v.reason,
      );
      return;
    case 'blocked':
      e.block(v.reason);
      return;
    case 'in-progress':
      e.byOthers = !(await mine(o, e, v.action));
      e.adopt(v.action, now);
      watch.armed(e, now, true);
      o.log.info({ server: e.id, action: v.action }, 'adopting a migration already in progress');
      return;
    case 'wait':
      e.wait(v.reason, now);
      if (now - (e.waitingSince ?? now) > o.nova.migrationTimeout * 1000) {
        e.finish('failed', now, `${v.reason} for longer than nova.migrationTimeout`);
      }
      return;
    case 'move':
      e.ready(v.action);
      e.last = v.last === true;
      return;
  }
}

/** Waiting for its confirm, or still in a cold migration (its host is the destination's from resize_migrated on). */
function coldOnItsWay(s: NovaServer, o: MigratorOptions): boolean {
  if (s.status === 'VERIFY_RESIZE' && taskStateOf(s) === null) return true;
  const v = classify(s, o.nova);
  return v.kind === 'in-progress' && v.action === 'cold-migrate';
}

/**
 * Is the move Nova shows drainer's? With none of drainer's calls on record, its owner's (or an
 * operator's); with a call of drainer's known (its request id, or a lost answer), Nova's records
 * tell (whose.ts); a record of an earlier version, which kept neither, counts its attempts.
 */
async function mine(o: MigratorOptions, e: Entry, action: MoveKind): Promise<boolean> {
  if (e.requests.size === 0 && e.lostCall === undefined) return e.attempts > 0;
  const ours = (await whoseMove(o, e.id, action, ownCalls(e))) === 'ours';
  if (ours) e.lostCall = undefined;
  return ours;
}

/**
 * The way out to apply now: the owner's, except that notify asks the owner first and takes the
 * default way (live) after nova.notifyTimeout. 'asked': still waiting for the owner. The clock is
 * in the record, so a restarted agent does not ask again from zero.
 */
async function notifyWay(o: MigratorOptions, e: Entry, now: number): Promise<Way | 'asked' | undefined> {
  const chosen = chosenWay(e.server);
  if (!('way' in chosen) || chosen.way !== 'notify' || e.server.status === 'ERROR') return undefined;
  if (e.notifiedAt === undefined) {
    e.notifiedAt = now;
    await o.remember(e.id, { notifiedAt: new Date(now).toISOString() });
  }
  const until = e.notifiedAt + o.nova.notifyTimeout * 1000;
  if (now >= until) return 'live';
  e.state = 'pending';
  e.action = 'notify';
  e.next = undefined;
  e.notBefore = until; // wakes the loop when the owner's time is up
  e.message =
    `its owner is asked to move it (metadata ${MAINTENANCE_KEY}=notify); the default way ` +
    `(live) in ${Math.ceil((until - now) / 1000)}s (nova.notifyTimeout)`;
  return 'asked';
}
