// An in-flight server, poll by poll: done, failed, needing a confirm, stuck, or past its
// deadline (aborted, then followed until Nova settles it). Failed attempts go back to the
// scheduler with a doubling backoff, within nova.retries.
import { isApiError, isAuthError, isConflictError, isForbiddenError } from '../../errors.ts';
import { isNotResized } from './compute.ts';
import type { Entry } from './entry.ts';
import type { Follow } from './follow.ts';
import type { Landings } from './landing.ts';
import type { MigratorOptions } from './migrator-options.ts';
import { MIN_POLL_MS, type Pace } from './pace.ts';
import { HOST_UNKNOWN, knownHost, novaSays } from './reasons.ts';
import { CLOCK_SKEW_MS, STUCK_AFTER_MS, newestRecord, unmovedAfterMs } from './records.ts';
import { hostOf, taskStateOf } from './types.ts';

const SETTLED = new Set(['ACTIVE', 'PAUSED', 'SHUTOFF']);
const GONE = new Set(['DELETED', 'SOFT_DELETED']);
const CONFIRM_RESEND_MS = 30_000;
/** Separate signal for clean-up calls (abort) made after our own signal fired. */
const cleanupSignal = () => AbortSignal.timeout(30_000);
/**
 * How long an aborted migration is followed before we report it. An abort only asks Nova to
 * stop; the rollback (Placement, Neutron and Cinder clean-up, a cast to the destination) takes
 * seconds, and on a busy cloud tens of seconds. At least 3 polls so the listing sees it; at most
 * Nova's default RPC timeout (60 s): a rollback still running by then is wedged, not slow.
 */
const abortGraceMs = (pollSeconds: number) => Math.min(60_000, Math.max(30_000, 3 * pollSeconds * 1000));

export class Tracker {
  readonly #o: MigratorOptions;
  readonly #pace: Pace;
  readonly #follow: Follow;
  readonly #landings: Landings;

  constructor(opts: MigratorOptions, pace: Pace, follow: Follow, landings: Landings) {
    this.#o = opts;
    this.#pace = pace;
    this.#follow = follow;
    this.#landings = landings;
  }

  /** An in-flight server: done, failed, needing a confirm, stuck, or past its deadline. */
  async track(e: Entry, now: number): Promise<void> {
    const s = e.server;
    const task = taskStateOf(s);
    const host = hostOf(s);
    if (GONE.has(s.status)) {
      // its owner deleted it mid-move (Nova allows a delete in any task): not drainer's failure
      e.finish('skipped', now, 'deleted during the evacuation (by its owner, while it moved)');
      this.#o.log.info({ server: e.id, action: e.action }, 'server deleted while it moved');
      return;
    }
    if (task === null && s.status === 'VERIFY_RESIZE' && e.byOthers && knownHost(s) !== this.#o.source) {
      // its owner's resize (or someone's cold migration) runs on another host: moved, and the
      // confirm (or a revert) is theirs
      e.target = knownHost(s);
      e.finish('succeeded', now, 'resized or migrated off the host by someone else (the confirm is theirs)');
      return;
    } else if (task === null && s.status === 'VERIFY_RESIZE') {
      await this.confirm(e);
    } else if (task === null && s.status === 'ERROR') {
      const why = `server went to ERROR during ${e.action}${novaSays(s, await this.#newestRecord(e))}`;
      e.finish('failed', now, why);
      this.#o.log.warn({ server: e.id }, why);
      return;
    } else if (task === null && SETTLED.has(s.status)) {
      await this.#settled(e, now, host);
      return;
    } else if (this.#stuck(e, now) || this.#unmoved(e, now, host)) {
      return;
    }
    if (e.abort) {
      if (now >= e.abort.until) this.#abortUnfinished(e, now);
      return;
    }
    if (
      e.overdue === undefined &&
      e.deadlineFrom !== undefined &&
      now - e.deadlineFrom > this.#o.nova.migrationTimeout * 1000
    ) {
      await this.#timeout(e, now);
    }
  }

  /**
   * Back to a steady state: on another host it moved; on ours the attempt failed; on a host Nova
   * does not show, nobody can tell, so it never counts as moved.
   */
  async #settled(e: Entry, now: number, host: string | null | undefined): Promise<void> {
    const { log, source, nova } = this.#o;
    this.#pace.ended(this.#follow.endedAt(e, now));
    this.#landings.settled(e);
    if (knownHost(e.server) === undefined) {
      e.finish('failed', now, HOST_UNKNOWN);
      log.error({ server: e.id }, HOST_UNKNOWN);
    } else if (e.byOthers && host === source) {
      // its owner's move ended here (a resize with no room elsewhere, a revert): not drainer's attempt
      e.handBack(`someone else's ${e.action} ended with the server still on ${source}; drainer moves it now`);
      log.info({ server: e.id }, "someone else's move ended on the host: drainer decides again");
    } else if (host !== source) {
      e.target = host ?? undefined;
      // An abort can lose the race: Nova finished the migration first, so the server did move.
      const late = e.abort?.sent ? 'the abort came too late' : e.abort?.note;
      const forced = e.stallAction === 'force-complete' ? 'moved after a forced completion' : undefined;
      const others = e.byOthers ? 'moved off the host by someone else' : undefined;
      const overdue = e.overdue !== undefined ? `moved after its deadline (${e.overdue})` : undefined;
      e.finish(
        'succeeded',
        now,
        e.abort ? `moved after its deadline (${late})` : (overdue ?? forced ?? others),
      );
      log.info({ server: e.id, target: e.target, attempts: e.attempts }, 'server moved');
      this.#o.landed?.(e.server);
    } else if (e.overdue !== undefined) {
      const why =
        `timed out after ${nova.migrationTimeout}s (${e.overdue}); Nova then ended it with the server ` +
        `still on ${source}${novaSays(e.server, await this.#newestRecord(e))}`;
      e.finish('failed', now, why);
      log.error({ server: e.id }, `migration ${why}`);
    } else if (e.abort) {
      const why = e.abort.sent
        ? `aborted after ${nova.migrationTimeout}s (nova.migrationTimeout)`
        : `timed out after ${nova.migrationTimeout}s (${e.abort.note})`;
      e.finish('failed', now, why);
      log.error(
        { server: e.id, migration: e.migrationId },
        `migration ${why}; the server is back on ${source}`,
      );
    } else {
      const why =
        e.stallNote ??
        `${e.action} ended with the server still on ${source}${novaSays(e.server, await this.#newestRecord(e))}`;
      this.failedAttempt(e, now, why);
    }
  }

  /**
   * The attempt's newest migration record, for the reason of a failure: as last read, else one
   * read of the host's records (failures only, so it costs nothing on the way that succeeds).
   */
  async #newestRecord(e: Entry): Promise<{ id: number | string; status: string } | undefined> {
    if (e.record) return e.record;
    const { compute, source, signal } = this.#o;
    const since = new Date((e.attemptStartedAt ?? this.#o.now()) - CLOCK_SKEW_MS);
    try {
      const records = await compute.listHostMigrations(source, since, signal);
      return newestRecord(records, e.id, e.action);
    } catch (err) {
      if (signal.aborted || isAuthError(err)) throw err;
      return undefined; // only the reason's detail is lost
    }
  }

  /**
   * The record says the attempt failed but Nova has left the server in its task state for
   * longer than a rollback takes. Nova refuses every action on it until that is reset, so
   * retrying is pointless: report it now rather than at the deadline.
   */
  #stuck(e: Entry, now: number): boolean {
    const since = e.record?.failedSince;
    if (!e.record || since === undefined) return false;
    if (now - since < STUCK_AFTER_MS) {
      // look again when it would count as stuck (or when the listing shows it settled)
      e.recordCheckAt = Math.min(e.recordCheckAt ?? Infinity, since + STUCK_AFTER_MS);
      return false;
    }
    const s = e.server;
    const why =
      `Nova marked migration ${e.record.id} ${e.record.status}, but the server is still ${s.status} ` +
      `(task_state ${taskStateOf(s)}); Nova refuses to move it until that is reset ` +
      `(restart nova-compute on ${this.#o.source}, or reset the server's state)`;
    e.migrationId = e.record.id;
    e.finish('failed', now, e.abort ? `timed out after ${this.#o.nova.migrationTimeout}s; ${why}` : why);
    this.#o.log.error({ server: e.id, migration: e.record.id }, `migration stuck: ${why}`);
    return true;
  }

  /**
   * The record says the migration completed, yet the server still names the source a poll
   * later: it did not move, and nothing will move it. Reported at once (server and migration),
   * and the attempt goes to the retry rules instead of waiting for the deadline.
   */
  #unmoved(e: Entry, now: number, host: string | null | undefined): boolean {
    const since = e.record?.doneSince;
    if (!e.record || since === undefined || host !== this.#o.source) return false;
    const grace = unmovedAfterMs(this.#o.nova.pollInterval);
    if (now - since < grace) {
      e.recordCheckAt = Math.min(e.recordCheckAt ?? Infinity, since + grace);
      return false;
    }
    const why =
      `Nova marked migration ${e.record.id} ${e.record.status}, but server ${e.name} (${e.id}) is ` +
      `still on ${this.#o.source} (${e.server.status}, task_state ${taskStateOf(e.server)})`;
    e.migrationId = e.record.id;
    this.#o.log.error({ server: e.id, migration: e.record.id }, `migration did not move the server: ${why}`);
    this.failedAttempt(e, now, why);
    return true;
  }

  /** The abort's grace is over and Nova still shows the server moving: report what we know. */
  #abortUnfinished(e: Entry, now: number): void {
    const s = e.server;
    const rec = e.record ? `, migration ${e.record.id} ${e.record.status}` : '';
    const grace = Math.round(abortGraceMs(this.#o.nova.pollInterval) / 1000);
    const why =
      `timed out after ${this.#o.nova.migrationTimeout}s (${e.abort?.note}); ${grace}s later Nova still ` +
      `shows the server ${s.status} (task_state ${taskStateOf(s)}${rec}) on ${hostOf(s)}`;
    e.finish('failed', now, why);
    this.#o.log.error({ server: e.id }, `migration ${why}`);
  }

  async confirm(e: Entry, signal = this.#o.signal): Promise<void> {
    // Nova confirms asynchronously: the server shows VERIFY_RESIZE a little longer, and a
    // second confirm answers 400. Send again only if the first seems lost.
    const now = this.#o.now();
    const resendAfter = Math.max(CONFIRM_RESEND_MS, 5 * this.#o.nova.pollInterval * 1000);
    if (e.confirmAgainAt !== undefined && now < e.confirmAgainAt) return;
    e.confirmAgainAt = now + resendAfter;
    const repeat = e.confirmsSent++ > 0;
    try {
      await this.#o.compute.confirmResize(e.id, signal);
      e.confirmsFailed = 0;
      this.#o.log.info({ server: e.id }, 'resize confirmed');
    } catch (err) {
      if (isAuthError(err) || isForbiddenError(err)) throw err;
      // Never a failure by itself: the listing decides. 409 = a confirm is under way; a 400 to a
      // repeated confirm = "not resized" because the first one took (Nova lags in showing it); "not
      // resized" to the first = another confirmed it first (the agent of the host it landed on,
      // whose own evacuation found it waiting there, or its owner)
      if (isConflictError(err) || (repeat && isApiError(err) && err.status === 400) || isNotResized(err)) {
        this.#o.log.info(
          { server: e.id, status: isApiError(err) ? err.status : undefined },
          'resize already being confirmed',
        );
      } else {
        // Lost or refused (a 503 "may have been applied", a reset): the next look reads the server
        // back, and still VERIFY_RESIZE it is confirmed again, soon; a confirm that did take answers
        // that one 400 "not resized" (above). The resend window is for a confirm Nova took.
        const firstMs = Math.min(MIN_POLL_MS, this.#o.nova.pollInterval * 1000);
        const retryMs = Math.min(resendAfter, firstMs * 2 ** e.confirmsFailed++);
        e.confirmAgainAt = now + retryMs;
        this.#o.log.warn(
          { err, server: e.id, retryMs },
          'confirmResize failed; trying again at the next look',
        );
      }
    }
  }

  failedAttempt(e: Entry, now: number, why: string): void {
    const { retries, retryBackoff } = this.#o.nova;
    if (e.tries <= retries) {
      const backoffMs = retryBackoff * 1000 * 2 ** (e.tries - 1);
      e.retryLater(now + backoffMs, `attempt ${e.attempts} failed: ${why}; retrying`);
      this.#o.log.warn({ server: e.id, attempts: e.attempts, backoffMs }, `migration attempt failed: ${why}`);
    } else {
      e.finish('failed', now, `failed after ${e.attempts} attempt(s): ${why}`);
      this.#o.log.error({ server: e.id, attempts: e.attempts }, `migration failed: ${why}`);
    }
  }

  /**
   * Past the deadline. A live migration is aborted and then FOLLOWED: the abort only asks, and
   * Nova may finish the migration before it takes (or the attempt may have just ended on its
   * own). The report waits for the server to settle, within abortGraceMs.
   */
  async #timeout(e: Entry, now: number): Promise<void> {
    const { nova, log } = this.#o;
    const secs = nova.migrationTimeout;
    const cannot = this.#overdue(e);
    if (cannot !== undefined) {
      // Nova still moves it and nothing stops that: overdue, followed, judged by where it lands
      e.overdue = cannot;
      e.message = `overdue: past its ${secs}s deadline (${cannot}); followed until Nova ends it`;
      log.warn(
        { server: e.id, action: e.action },
        `migration passed its ${secs}s deadline (${cannot}); following it`,
      );
      return;
    }
    if (!nova.abortOnTimeout || !this.#o.compute.atLeast(24)) {
      const note = !nova.abortOnTimeout ? 'left running' : 'abort needs compute microversion 2.24';
      e.finish('failed', now, `timed out after ${secs}s (${note})`);
      log.error({ server: e.id }, `migration timed out after ${secs}s (${note})`);
      return;
    }
    const { sent, note } = await this.abort(e);
    const until = now + abortGraceMs(nova.pollInterval);
    e.abort = { sent, note, until };
    e.message = `past its deadline (${note}); waiting for Nova to settle it`;
    // read the record once more when the grace ends, should the server still look busy then
    e.recordCheckAt = until;
    log.warn(
      { server: e.id, migration: e.migrationId },
      `migration passed its ${secs}s deadline (${note}); following it`,
    );
  }

  /**
   * Why a move past its deadline is followed, not ended: nothing can stop it (a cold migration), or
   * it is not drainer's to stop (someone else's). Undefined for drainer's live migrations.
   */
  #overdue(e: Entry): string | undefined {
    if (e.byOthers) return "someone else's move: not drainer's to abort";
    if (e.action !== 'live-migrate') return 'a cold migration cannot be aborted';
    return undefined;
  }

  /**
   * After a cancel: a server that is on another host moved, whatever the abort said (Nova may have
   * finished before the abort, "no migration in progress to abort"); one still in its live migration
   * moves on (an abort finds nothing to stop while Nova schedules it). Reads it once; never throws.
   */
  async afterCancel(e: Entry, why: string): Promise<'moved' | 'moving' | 'stayed'> {
    const s = await this.#o.compute.getServer(e.id, cleanupSignal()).catch(() => undefined);
    if (!s) return 'stayed';
    if (knownHost(s) !== undefined && hostOf(s) !== this.#o.source) {
      e.server = s;
      e.target = hostOf(s) ?? undefined;
      e.finish('succeeded', this.#o.now(), `moved (${why})`);
      this.#o.log.info({ server: e.id, target: e.target }, `server moved (${why})`);
      return 'moved';
    }
    if (e.action === 'live-migrate' && (s.status === 'MIGRATING' || taskStateOf(s) === 'migrating')) {
      e.server = s;
      return 'moving';
    }
    return 'stayed';
  }

  /**
   * After an abort Nova may still finish the migration (libvirt was past the point of no return):
   * wait, bounded, until it leaves Nova's in-progress list, so movedAnyway judges the end, not the
   * moment the abort was sent.
   */
  async abortSettled(e: Entry, migrationId: string | number, looks = 30): Promise<void> {
    for (let look = 0; look < looks; look++) {
      const open = await this.#o.compute.listServerMigrations(e.id, cleanupSignal()).catch(() => undefined);
      if (open && !open.some((m) => String(m.id) === String(migrationId))) return;
      await this.#o.sleep(1_000, cleanupSignal()).catch(() => undefined);
    }
  }

  /** Aborts the server's live migration (2.24+); says what happened, never throws. */
  async abort(e: Entry): Promise<{ sent: boolean; note: string }> {
    if (e.action !== 'live-migrate') return { sent: false, note: 'a cold migration cannot be aborted' };
    if (!this.#o.compute.atLeast(24)) return { sent: false, note: 'abort needs compute microversion 2.24' };
    try {
      const signal = cleanupSignal();
      const migrations = await this.#o.compute.listServerMigrations(e.id, signal);
      const m = migrations.find((x) => !['completed', 'error', 'failed', 'cancelled'].includes(x.status));
      if (!m) return { sent: false, note: 'no migration in progress to abort' };
      e.migrationId = m.id;
      await this.#o.compute.abortMigration(e.id, m.id, signal);
      return { sent: true, note: `aborted migration ${m.id}` };
    } catch (err) {
      this.#o.log.warn({ err, server: e.id }, 'aborting the migration failed');
      return { sent: false, note: 'abort failed' };
    }
  }
}
