// The stall policy: reads Nova's copy counters (2.23+) of live migrations that run longer than a
// healthy one takes on this host, detects a stall (stall.ts) and does what nova.onStall says:
// force the migration to complete (2.22+, once per migration, recorded before the call), abort
// it (2.24+; the attempt then fails and is retried as any other), or only report it.
import { isApiError, isAuthError, isForbiddenError, isNotFoundError } from '../../errors.ts';
import { copyText } from '../../core/backends/copy-text.ts';
import type { Entry } from './entry.ts';
import type { MigratorOptions } from './migrator-options.ts';
import type { Pace } from './pace.ts';
import { isStalled, observe, rateOf, sampleOf, stallAction, wantsRate, type CopySample } from './stall.ts';
import { taskStateOf, type NovaMigration } from './types.ts';

/** Statuses in which a live migration's counters mean something. */
const COPYING = new Set(['running', 'preparing', 'queued']);

/** A live migration still copying as the listing last showed it, with a read planned. */
const followed = (e: Entry): boolean =>
  e.state === 'migrating' && !e.abort && e.copyCheckAt !== undefined && taskStateOf(e.server) === 'migrating';

/**
 * Nova's answer to an action on a migration that is no longer running (InvalidMigrationState: 400 for
 * force_complete, 409 where the server's task changed): it ended, failed, or its server was deleted
 * between drainer's look and its call, a race no client avoids.
 */
export const endedMeanwhile = (err: unknown): boolean =>
  isApiError(err) && (err.status === 400 || err.status === 409);

/** How soon a migration whose counters Nova does not show yet is looked at again. */
const COUNTERS_AGAIN_MS = 10_000;

export class Watch {
  readonly #o: MigratorOptions;
  readonly #pace: Pace;
  /** False after a 403 on the counters (a policy that hides them): nothing is read any more. */
  #readable = true;
  #saidFallback = false;
  /** The copy rate on this host (bytes per ms) once measured: one sample then dates a stall. */
  #rate: number | undefined;

  /** No two reads of one migration's counters closer than a poll (at most 10 s apart that makes). */
  get #pollMs(): number {
    return Math.min(10_000, this.#o.nova.pollInterval * 1000);
  }

  constructor(opts: MigratorOptions, pace: Pace) {
    this.#o = opts;
    this.#pace = pace;
  }

  /**
   * A live migration got its slot: its counters are first read when it has run longer than a
   * healthy one takes here (three times the typical one), never later than the stall window.
   */
  armed(e: Entry, now: number, adopted = false): void {
    if (e.action !== 'live-migrate' || !this.#readable) return;
    if (!this.#o.compute.atLeast(23)) {
      if (!this.#saidFallback) {
        this.#saidFallback = true;
        this.#o.log.warn('live-migration progress needs compute microversion 2.23: stalls are not detected');
      }
      return;
    }
    const stallMs = this.#o.nova.stallAfter * 1000;
    const gap = this.#pace.gapMs;
    // no migration ended here yet: half the stall window
    const healthy = gap === undefined ? stallMs / 2 : 3 * gap * this.#o.nova.maxConcurrentMigrations;
    const first = now + Math.min(stallMs, Math.max(this.#pollMs, healthy));
    // an adopted migration with a stall clock in the record (a restart) is looked at at once; any
    // other just before its first read of the records, which the counters then make needless
    e.copyCheckAt = adopted && e.stall ? now : Math.min(first, (e.recordCheckAt ?? Infinity) - 1);
  }

  /**
   * Copying in circles and waiting for its stall decision: its end is not expected before its next
   * look, so the poll need not hurry for it.
   */
  parked(e: Entry): boolean {
    const { copy, stall } = e;
    if (e.forcedEndAt !== undefined && this.#o.now() < e.forcedEndAt) return true;
    return (
      e.stallAction === undefined &&
      e.copyCheckAt !== undefined &&
      copy !== undefined &&
      stall !== undefined &&
      copy.processed >= copy.total &&
      stall.since < copy.at
    );
  }

  /** When the next read of counters falls due, if any is planned. */
  nextDue(entries: readonly Entry[]): number | undefined {
    if (!this.#readable || !this.#o.compute.atLeast(23)) return undefined;
    const at = entries.filter(followed).map((e) => e.copyCheckAt ?? Infinity);
    return at.length ? Math.min(...at) : undefined;
  }

  /** Reads the counters of the migrations due a look, and acts on the ones that stalled. */
  async read(entries: readonly Entry[]): Promise<void> {
    if (!this.#readable || !this.#o.compute.atLeast(23)) return;
    const now = this.#o.now();
    for (const e of entries) {
      if (this.#o.signal.aborted) return;
      if (!followed(e) || now < (e.copyCheckAt ?? Infinity)) continue;
      await this.#sample(e, now);
      if (isStalled(e.stall, now, this.#o.nova.stallAfter * 1000) && e.stallAction === undefined) {
        await this.#stalled(e);
      }
    }
  }

  async #sample(e: Entry, now: number): Promise<void> {
    const { compute, signal, log, nova } = this.#o;
    const known = e.copy ? e.stall?.migrationId : undefined;
    let m: NovaMigration | undefined;
    try {
      if (known !== undefined) m = await compute.getServerMigration(e.id, known, signal);
      else m = (await compute.listServerMigrations(e.id, signal)).find((x) => COPYING.has(x.status));
    } catch (err) {
      if (signal.aborted || isAuthError(err)) throw err;
      if (isForbiddenError(err)) {
        this.#readable = false;
        log.warn({ err }, 'reading live-migration progress is forbidden; stalls are not detected');
      } else if (!isNotFoundError(err)) {
        log.warn({ err, server: e.id }, 'reading live-migration progress failed; trying again');
        e.copyCheckAt = now + nova.pollInterval * 1000;
        return;
      }
    }
    if (!m) {
      // Not in progress any more while the server still shows it migrating: the record says why
      e.copyCheckAt = undefined;
      e.recordCheckAt = now;
      return;
    }
    e.migrationId = m.id;
    const s = sampleOf(m, now);
    if (!s) {
      // No counters yet: Nova's record gets libvirt's first ones some seconds into the copy (null or 0
      // before), so look again; a driver that has reported none within the stall window does not
      // report them, and the records follow it, as before 2.23.
      const running = now - (e.deadlineFrom ?? e.attemptStartedAt ?? now);
      e.copyCheckAt =
        running < nova.stallAfter * 1000 ? now + Math.max(this.#pollMs, COUNTERS_AGAIN_MS) : undefined;
      return;
    }
    // the counters follow it now: the records are read only when it is no longer in progress
    e.recordCheckAt = undefined;
    this.#fold(e, m.id, s, now);
  }

  #fold(e: Entry, migrationId: number | string, s: CopySample, now: number): void {
    const before = e.stall;
    e.copy = s;
    const started = {
      earliest: e.attemptStartedAt ?? now,
      latest: e.deadlineFrom ?? e.attemptStartedAt ?? now,
    };
    e.stall = observe(before, migrationId, s, started, this.#rate);
    if (before?.first && !e.stall.first && String(before.migrationId) === String(migrationId)) {
      this.#rate = rateOf(before.first, s);
    } else if (started.earliest === started.latest && s.at > started.latest && s.processed >= s.total) {
      // started with a free slot: one sample gives the rate (Nova's scheduling makes it a shade low)
      this.#rate ??= rateOf({ at: started.latest, processed: 0 }, s);
    }
    // next look: a poll later to measure the copy rate; then when it would count as stalled (a
    // migration still falling looks again then)
    e.copyCheckAt = wantsRate(e.stall)
      ? now + this.#pollMs
      : Math.max(now + this.#pollMs, e.stall.since + this.#o.nova.stallAfter * 1000);
    if (before?.since !== e.stall.since || String(before.migrationId) !== String(migrationId)) {
      const { least, since } = e.stall;
      void this.#remember(e, { stall: { migrationId, least, since: new Date(since).toISOString() } });
    }
  }

  async #stalled(e: Entry): Promise<void> {
    const { nova, log } = this.#o;
    const mid = e.stall?.migrationId ?? e.migrationId ?? '?';
    const copy = e.copy
      ? copyText({ totalBytes: e.copy.total, remainingBytes: e.copy.remaining, converging: false })
      : '';
    const what = `live migration ${mid} stalled at ${copy}: what is left has not fallen for ${nova.stallAfter}s`;
    const { action, fallback } = stallAction(nova, (v) => this.#o.compute.atLeast(v));
    if (fallback && !this.#saidFallback) {
      this.#saidFallback = true;
      log.warn(`nova.onStall is ${nova.onStall} but ${fallback}: stalled migrations are only reported`);
    }
    e.stallAction = action;
    e.copyCheckAt = undefined;
    const owner = e.server.tenant_id;
    if (action === 'wait') {
      e.message = `${what}; left to run (${fallback ?? 'nova.onStall: wait'})`;
      log.warn({ server: e.id, owner, migration: mid }, e.message);
    } else if (action === 'force-complete') {
      await this.#force(e, mid, what);
    } else {
      e.stallNote = `${what}; aborted (nova.onStall: abort)`;
      e.message = e.stallNote;
      log.warn({ server: e.id, owner, migration: mid }, e.stallNote);
      try {
        await this.#o.compute.abortMigration(e.id, mid, this.#o.signal);
      } catch (err) {
        if (this.#o.signal.aborted || isAuthError(err)) throw err;
        log.warn({ err, server: e.id, migration: mid }, 'aborting the stalled migration failed');
      }
    }
  }

  /** Once per migration: the record says so before the call, so no agent ever sends it twice. */
  async #force(e: Entry, mid: number | string, what: string): Promise<void> {
    const { log, signal } = this.#o;
    const owner = e.server.tenant_id;
    if (e.forced !== undefined && String(e.forced) === String(mid)) {
      e.message = `${what}; forced to complete earlier, waiting for Nova to finish it`;
      log.info({ server: e.id, owner, migration: mid }, e.message);
      return;
    }
    e.forced = mid;
    await this.#remember(e, { forced: mid });
    e.message = `${what}; forced to complete (the guest pauses briefly)`;
    log.warn({ server: e.id, owner, migration: mid }, e.message);
    try {
      await this.#o.compute.forceCompleteMigration(e.id, mid, signal);
      // the guest pauses while what is left is copied: not over before that
      if (this.#rate && e.copy) e.forcedEndAt = this.#o.now() + e.copy.remaining / this.#rate;
    } catch (err) {
      if (signal.aborted || isAuthError(err)) throw err;
      // the listing tells how it ended; a race is no warning (and names no request: nothing went wrong)
      if (endedMeanwhile(err))
        log.info(
          { server: e.id, migration: mid, status: isApiError(err) ? err.status : undefined },
          'the migration was no longer running when forced to complete (it ended, or its server was deleted)',
        );
      else log.warn({ err, server: e.id, migration: mid }, 'forcing the migration to complete failed');
    }
  }

  async #remember(e: Entry, patch: Parameters<MigratorOptions['remember']>[1]): Promise<void> {
    try {
      await this.#o.remember(e.id, patch);
    } catch (err) {
      this.#o.log.warn({ err, server: e.id }, 'could not record the stall in the Node record');
    }
  }
}
