// The scheduler: keeps up to maxConcurrentMigrations + submitAhead servers submitted off one host
// (Nova runs M and queues the rest, so a slot never waits for our poll), learns how they are doing
// from ONE request per poll (the servers changed since the last one, anywhere; rarely also one read
// of the host's migration records), retries failed attempts with a doubling backoff, aborts
// migrations past their deadline and follows the rollback to its end, and stops when a listing of
// the host shows it empty or only blockers (and given-up servers) remain.
import {
  isApiError,
  isAuthError,
  isCancelledError,
  isConflictError,
  isForbiddenError,
  isNotFoundError,
} from '../../errors.ts';
import type { WorkloadProgress } from '../../core/plugin.ts';
import type { NovaConfig } from '../../config/schema.ts';
import type { Logger } from '../../observability/logger.ts';
import { classify, type MoveAction } from './classify.ts';
import type { ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';
import { hostOf, taskStateOf, type NovaMigration, type NovaServer } from './types.ts';
import { Entry, toProgress } from './entry.ts';
import { CLOCK_SKEW_MS, FIRST_RECORD_CHECK_MS, STUCK_AFTER_MS, newestRecord, seen } from './records.ts';
import { Pace, endedAt } from './pace.ts';

export type MigratorCompute = Pick<
  ComputeClient,
  | 'listServersOnHost'
  | 'listServersChangedSince'
  | 'getServer'
  | 'liveMigrate'
  | 'migrate'
  | 'confirmResize'
  | 'listServerMigrations'
  | 'listHostMigrations'
  | 'abortMigration'
  | 'atLeast'
>;

/** What the Node record keeps per server, so a restarted agent resumes instead of restarting. */
export interface MigrationRecord {
  attempts: number;
  migrationId?: number | string;
  startedAt: string;
}

export interface MigratorOptions {
  compute: MigratorCompute;
  source: string;
  nova: NovaConfig;
  log: Logger;
  sleep: Sleep;
  now: () => number;
  signal: AbortSignal;
  abortOnCancel: boolean;
  resumed: Readonly<Record<string, MigrationRecord>>;
  /** Persists the record entry BEFORE the migration call is made. */
  beforeStart(serverId: string, entry: MigrationRecord): Promise<void>;
  progress(items: readonly WorkloadProgress[]): void;
}

const SETTLED = new Set(['ACTIVE', 'PAUSED', 'SHUTOFF']);
/** A migration record in these has not reached the host's slot yet: its deadline has not started. */
const NOT_STARTED = new Set(['accepted', 'scheduled', 'queued', 'pre-migrating']);
/**
 * `changes-since` looks back this far before Nova's clock as last seen: Nova stores `updated_at`
 * to the second, and a change may commit a moment after the request that missed it.
 */
const CHANGES_MARGIN_MS = 10_000;
const MAX_POLL_FAILURES = 5;
const CONFIRM_RESEND_MS = 30_000;
/** Separate signal for clean-up calls (abort) made after our own signal fired. */
const cleanupSignal = () => AbortSignal.timeout(30_000);
/**
 * How long an aborted migration is followed before we report it. An abort only asks Nova to
 * stop; the rollback (Placement, Neutron and Cinder clean-up, a cast to the destination) takes
 * seconds, and on a busy cloud tens of seconds. At least 3 polls so the listing sees it; at most
 * Nova's default RPC timeout (60 s): a rollback still running by then is wedged, not slow.
 */
/**
 * Migrations queued behind Nova's M slots per slot (2.65+, where a queued one can be aborted). The
 * queue must outlast a poll (about half the in-flight work) plus Nova's scheduling of the next
 * submits; one per slot drains in less than that when migrations are short, and with copy times that vary
 * (10 s … 5 min) two per slot still run dry now and then; three keep the slots busy (bench: makespan).
 */
const SUBMIT_AHEAD_PER_SLOT = 3;
/**
 * And at least this many in all. What drains the queue between two polls is a run of short copies,
 * and how much the time of n ends varies shrinks only as √n: with one slot, three queued leave two
 * ends of margin after a poll at half the window, which three short copies in a row use up; five
 * leave three (as two slots with three each).
 */
const MIN_SUBMIT_AHEAD = 5;
const abortGraceMs = (pollSeconds: number) => Math.min(60_000, Math.max(30_000, 3 * pollSeconds * 1000));

export class Migrator {
  readonly #o: MigratorOptions;
  readonly #entries = new Map<string, Entry>();
  /** False after a 403 on the records (a policy that hides them): the listing alone decides. */
  #recordsReadable = true;
  readonly #pace: Pace;
  /** Nova's clock as its answers last showed it: the next `changes-since`. */
  #novaClock: number | undefined;
  /** When this poll and the one before it were sent (our clock). */
  #pollAt: { previous: number | undefined; current: number } | undefined;

  constructor(opts: MigratorOptions) {
    this.#o = opts;
    this.#pace = new Pace(opts.nova.pollInterval * 1000);
  }

  /** How many migrations may be submitted at once: Nova's M plus the ones queued behind them. */
  get #window(): number {
    const { nova, compute } = this.#o;
    // Below 2.65 a queued migration cannot be aborted, so nothing is queued unless the operator asks.
    return (
      nova.maxConcurrentMigrations +
      (nova.submitAhead ??
        (compute.atLeast(65)
          ? Math.max(MIN_SUBMIT_AHEAD, SUBMIT_AHEAD_PER_SLOT * nova.maxConcurrentMigrations)
          : 0))
    );
  }

  get entries(): readonly Entry[] {
    return [...this.#entries.values()];
  }

  async run(): Promise<WorkloadProgress[]> {
    const { signal } = this.#o;
    let failures = 0;
    // A listing of the host starts the evacuation and confirms its end; the polls between ask
    // only for what changed.
    let full = true;
    for (;;) {
      if (signal.aborted) break;
      try {
        await this.#poll(full);
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        if (isAuthError(err) || isForbiddenError(err) || ++failures >= MAX_POLL_FAILURES) throw err;
        this.#o.log.warn({ err }, 'polling Nova failed; trying again');
      }
      this.#report();
      if (failures === 0 && this.#done()) {
        if (full) break;
        full = true; // looks done: check the host itself, at once
        continue;
      }
      full = false;
      try {
        const tail = !this.entries.some((e) => e.state === 'pending' && e.next !== undefined);
        const pace = { inFlight: this.#inFlight(), now: this.#o.now(), dueIn: this.#dueIn(), tail };
        await this.#o.sleep(this.#pace.next(pace), signal);
      } catch {
        // aborted: handled at the top of the loop
      }
    }
    // a cancel (uncordon) takes back what it can; a shutdown leaves every submitted migration to
    // Nova, where the next agent adopts it from the record (aborting would make it submit them again)
    if (signal.aborted && isCancelledError(signal.reason)) await this.#cancel();
    else if (signal.aborted) this.#leave();
    this.#report();
    return this.entries.map((e) => toProgress(e, this.#o.now()));
  }

  #report(): void {
    this.#o.progress(this.entries.map((e) => toProgress(e, this.#o.now())));
  }

  /** Nothing moving, nothing left to start: only succeeded, failed, skipped or blocked servers. */
  #done(): boolean {
    return this.entries.every((e) => e.state !== 'migrating' && e.state !== 'pending');
  }

  /** The nearest moment something is due on our side, from now. */
  #dueIn(): number | undefined {
    const now = this.#o.now();
    const due = this.entries.flatMap((e) =>
      e.terminal ? [] : [e.state === 'pending' ? e.notBefore : undefined, e.abort?.until, e.recordCheckAt],
    );
    const at = due.filter((t): t is number => t !== undefined);
    return at.length ? Math.min(...at) - now : undefined;
  }

  async #poll(full: boolean): Promise<void> {
    const at = this.#o.now();
    if (full) await this.#listHost();
    else await this.#listChanges();
    this.#pollAt = { previous: this.#pollAt?.current, current: at };
    await this.#readRecords();
    this.#startClocks();
    for (const e of this.entries) if (!e.terminal) await this.#evaluate(e);
    await this.#startMore();
  }

  /** Every server on the host; one that left it since is read by itself (rare: a resume). */
  async #listHost(): Promise<void> {
    const { compute, source, signal } = this.#o;
    this.#novaClock ??= this.#o.now() - CLOCK_SKEW_MS;
    const listed = await compute.listServersOnHost(source, signal);
    const seen = new Set<string>();
    for (const s of listed) {
      seen.add(s.id);
      this.#entry(s).server = s;
    }
    for (const e of this.entries) {
      if (seen.has(e.id) || e.terminal) continue;
      try {
        e.server = await compute.getServer(e.id, signal);
      } catch (err) {
        if (!isNotFoundError(err)) throw err;
        e.finish('skipped', this.#o.now(), 'deleted during the evacuation');
      }
    }
  }

  /**
   * One request: the servers changed since the last poll. A server not in it has not changed; a
   * server that arrived on the host is taken on like one listed at the start.
   */
  async #listChanges(): Promise<void> {
    const { compute, source, signal } = this.#o;
    const since = new Date((this.#novaClock ?? this.#o.now() - CLOCK_SKEW_MS) - CHANGES_MARGIN_MS);
    const { servers, novaNow } = await compute.listServersChangedSince(since, signal);
    if (novaNow !== undefined) this.#novaClock = Math.max(this.#novaClock ?? novaNow, novaNow);
    for (const s of servers) {
      const e = this.#entries.get(s.id);
      if (e) e.server = s;
      else if (hostOf(s) === source && classify(s, this.#o.nova).kind !== 'gone') this.#entry(s).server = s;
    }
  }

  /**
   * A migration's deadline runs from when it can hold one of Nova's slots, not from its submit.
   * Nova starts a host's migrations in order, so with fewer than M of ours started the oldest
   * waiting one has its slot, unless its migration record (when read) still shows it queued.
   */
  #startClocks(): void {
    const now = this.#o.now();
    const moving = this.entries.filter((e) => e.state === 'migrating');
    let started = moving.filter((e) => e.deadlineFrom !== undefined).length;
    const waiting = moving
      .filter((e) => e.deadlineFrom === undefined)
      .sort((a, b) => (a.attemptStartedAt ?? 0) - (b.attemptStartedAt ?? 0));
    for (const e of waiting) {
      const status = e.record?.status;
      const slot =
        status === undefined ? started < this.#o.nova.maxConcurrentMigrations : !NOT_STARTED.has(status);
      if (!slot) continue;
      this.#slotFrom(e, now);
      started++;
    }
  }

  /**
   * The attempt holds a slot from now: its deadline starts, and its record is first read when it runs
   * well past how long migrations take on this host (at least a minute), to catch a stuck one early.
   */
  #slotFrom(e: Entry, now: number): void {
    e.deadlineFrom = now;
    const gap = this.#pace.gapMs;
    const typical = gap === undefined ? 0 : 3 * gap * this.#o.nova.maxConcurrentMigrations;
    e.recordCheckAt = now + Math.max(FIRST_RECORD_CHECK_MS, typical);
  }

  /**
   * Reads the host's migration records when an in-flight server is due a look (see
   * Entry.recordRead: after 1, 2, 4 … minutes of one attempt, and at the end of an abort's
   * grace). One request serves every due server; most evacuations never make it.
   */
  async #readRecords(): Promise<void> {
    const { compute, source, signal, log } = this.#o;
    const now = this.#o.now();
    const due = this.entries.filter(
      (e) =>
        e.state === 'migrating' &&
        taskStateOf(e.server) !== null &&
        e.recordCheckAt !== undefined &&
        now >= e.recordCheckAt,
    );
    if (due.length === 0 || !this.#recordsReadable) return;
    const since = new Date(Math.min(...due.map((e) => e.attemptStartedAt ?? now)) - CLOCK_SKEW_MS);
    let records: NovaMigration[] = [];
    try {
      records = await compute.listHostMigrations(source, since, signal);
    } catch (err) {
      if (signal.aborted || isAuthError(err)) throw err;
      if (isForbiddenError(err)) this.#recordsReadable = false;
      log.warn({ err }, 'reading migration records failed; following servers from the listing');
    }
    // The read covers every server of the host: those due soon count as read too.
    const soon = this.entries.filter(
      (e) => e.state === 'migrating' && (e.recordCheckAt ?? Infinity) < now + FIRST_RECORD_CHECK_MS,
    );
    for (const e of new Set([...due, ...soon])) {
      e.recordRead(now);
      const r = newestRecord(records, e.id, e.action);
      if (r) e.record = seen(e.record, r, now);
    }
  }

  #entry(s: NovaServer): Entry {
    let e = this.#entries.get(s.id);
    if (!e) {
      const rec = this.#o.resumed[s.id];
      e = new Entry(s, this.#o.source, rec);
      this.#entries.set(s.id, e);
    }
    return e;
  }

  async #evaluate(e: Entry): Promise<void> {
    const now = this.#o.now();
    if (e.state === 'migrating') {
      await this.#track(e, now);
      return;
    }
    const s = e.server;
    if (hostOf(s) !== this.#o.source) {
      // It left without us (someone else moved it): the host is emptier either way.
      e.target = hostOf(s) ?? undefined;
      e.finish('succeeded', now, 'moved off the host by someone else');
      return;
    }
    const v = classify(s, this.#o.nova);
    switch (v.kind) {
      case 'gone':
        e.finish('skipped', now, 'deleted');
        return;
      case 'blocked':
        e.block(v.reason);
        return;
      case 'in-progress':
        e.adopt(v.action, now);
        this.#o.log.info({ server: e.id, action: v.action }, 'adopting a migration already in progress');
        return;
      case 'wait':
        e.wait(v.reason, now);
        if (now - (e.waitingSince ?? now) > this.#o.nova.migrationTimeout * 1000) {
          e.finish('failed', now, `${v.reason} for longer than nova.migrationTimeout`);
        }
        return;
      case 'move':
        e.ready(v.action);
        return;
    }
  }

  /** An in-flight server: done, failed, needing a confirm, stuck, or past its deadline. */
  async #track(e: Entry, now: number): Promise<void> {
    const s = e.server;
    const task = taskStateOf(s);
    const host = hostOf(s);
    if (task === null && s.status === 'VERIFY_RESIZE') {
      await this.#confirm(e);
    } else if (task === null && s.status === 'ERROR') {
      e.finish('failed', now, `server went to ERROR during ${e.action}`);
      this.#o.log.warn({ server: e.id }, 'server went to ERROR while migrating');
      return;
    } else if (task === null && SETTLED.has(s.status)) {
      this.#settled(e, now, host);
      return;
    } else if (this.#stuck(e, now)) {
      return;
    }
    if (e.abort) {
      if (now >= e.abort.until) this.#abortUnfinished(e, now);
      return;
    }
    if (e.deadlineFrom !== undefined && now - e.deadlineFrom > this.#o.nova.migrationTimeout * 1000) {
      await this.#timeout(e, now);
    }
  }

  /** Back to a steady state: on another host it moved; on ours the attempt failed. */
  #settled(e: Entry, now: number, host: string | null | undefined): void {
    const { log, source, nova } = this.#o;
    this.#pace.ended(this.#endedAt(e, now));
    if (host !== source) {
      e.target = host ?? undefined;
      // An abort can lose the race: Nova finished the migration first, so the server did move.
      const late = e.abort?.sent ? 'the abort came too late' : e.abort?.note;
      e.finish('succeeded', now, e.abort ? `moved after its deadline (${late})` : undefined);
      log.info({ server: e.id, target: e.target, attempts: e.attempts }, 'server moved');
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
      this.#failedAttempt(e, now, `${e.action} ended with the server still on ${source}`);
    }
  }

  /** When the server settled, on our clock (see endedAt). */
  #endedAt(e: Entry, now: number): number {
    return endedAt({
      now,
      since: this.#pollAt?.previous,
      novaNow: this.#novaClock,
      updated: e.server.updated,
    });
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

  async #confirm(e: Entry): Promise<void> {
    // Nova confirms asynchronously: the server shows VERIFY_RESIZE a little longer, and a
    // second confirm answers 400. Send again only if the first seems lost.
    const now = this.#o.now();
    const resendAfter = Math.max(CONFIRM_RESEND_MS, 5 * this.#o.nova.pollInterval * 1000);
    if (e.confirmSentAt !== undefined && now - e.confirmSentAt < resendAfter) return;
    e.confirmSentAt = now;
    const repeat = e.confirmsSent++ > 0;
    try {
      await this.#o.compute.confirmResize(e.id, this.#o.signal);
      this.#o.log.info({ server: e.id }, 'resize confirmed');
    } catch (err) {
      if (isAuthError(err) || isForbiddenError(err)) throw err;
      // Never a failure by itself: the listing decides. 409 = a confirm is under way; a 400 to a
      // repeated confirm = "not resized" because the first one took (Nova lags in showing it).
      if (isConflictError(err) || (repeat && isApiError(err) && err.status === 400)) {
        this.#o.log.info(
          { server: e.id, status: isApiError(err) ? err.status : undefined },
          'resize already being confirmed',
        );
      } else {
        this.#o.log.warn({ err, server: e.id }, 'confirmResize failed; trying again later');
      }
    }
  }

  #failedAttempt(e: Entry, now: number, why: string): void {
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
    const abortable = nova.abortOnTimeout && e.action === 'live-migrate' && this.#o.compute.atLeast(24);
    if (!abortable) {
      const note = !nova.abortOnTimeout
        ? 'left running'
        : e.action !== 'live-migrate'
          ? 'a cold migration cannot be aborted'
          : 'abort needs compute microversion 2.24';
      e.finish('failed', now, `timed out after ${secs}s (${note})`);
      log.error({ server: e.id }, `migration timed out after ${secs}s (${note})`);
      return;
    }
    const { sent, note } = await this.#abort(e);
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

  /** Aborts the server's live migration (2.24+); says what happened, never throws. */
  async #abort(e: Entry): Promise<{ sent: boolean; note: string }> {
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

  async #startMore(): Promise<void> {
    const { now, signal } = this.#o;
    for (const e of this.entries) {
      if (signal.aborted) return;
      if (e.state !== 'pending' || !e.next || (e.notBefore ?? 0) > now()) continue;
      if (e.next === 'confirm-resize') {
        // Resized onto this host and waiting: confirm, then it moves like any other server.
        await this.#confirm(e);
        continue;
      }
      if (this.#inFlight() >= this.#window) continue; // confirms still run
      await this.#start(e, e.next);
    }
  }

  #inFlight(): number {
    return this.entries.filter((e) => e.state === 'migrating').length;
  }

  async #start(e: Entry, action: Exclude<MoveAction, 'confirm-resize'>): Promise<void> {
    const { compute, signal, log } = this.#o;
    const now = this.#o.now();
    const slotFree = this.#inFlight() < this.#o.nova.maxConcurrentMigrations;
    await this.#o.beforeStart(e.id, {
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
      e.started(action, now);
      if (isConflictError(err)) {
        // Not retried: the server changed under us. If a migration is running, it is ours to track.
        const s = await compute.getServer(e.id, signal).catch(() => e.server);
        const v = classify(s, this.#o.nova);
        if (v.kind === 'in-progress') return;
        e.finish('failed', now, `Nova refused ${action}: ${(err as Error).message}`);
        return;
      }
      this.#failedAttempt(e, now, (err as Error).message);
      return;
    }
    e.started(action, now);
    // A cold migration is never queued behind a slot; a live one is when the window is full.
    if (slotFree || action !== 'live-migrate') this.#slotFrom(e, now);
    else e.recordCheckAt = undefined; // queued: nothing to check until it holds a slot
    log.info({ server: e.id, name: e.name, action, attempt: e.attempts }, 'migration started');
  }

  #leave(): void {
    for (const e of this.entries)
      if (e.state === 'migrating') e.message = 'shut down: left to Nova, the next agent follows it';
  }

  async #cancel(): Promise<void> {
    const moving = this.entries.filter((e) => e.state === 'migrating');
    for (const e of moving) {
      // Submitted ahead and not started: nothing to lose, so it is aborted whatever abortOnCancel
      // says (Nova aborts queued live migrations from 2.65; below, none were submitted ahead).
      const queued = e.deadlineFrom === undefined && this.#o.compute.atLeast(65);
      if (e.abort) {
        e.finish('failed', this.#o.now(), `cancelled after its deadline (${e.abort.note})`);
      } else if (this.#o.abortOnCancel || queued) {
        const { note } = await this.#abort(e);
        e.finish('failed', this.#o.now(), `cancelled (${note})`);
      } else {
        e.message = 'cancelled: left to finish on its own';
      }
    }
    for (const e of this.entries) if (e.state === 'pending') e.message = 'cancelled before it started';
  }
}
