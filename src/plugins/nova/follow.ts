// The follow: learns how the host's servers are doing from ONE request per poll (a listing of
// the host at the start and end, the servers changed since the last poll in between), and
// rarely one read of the host's migration records for attempts that run long.
import { isAuthError, isForbiddenError, isNotFoundError } from '../../errors.ts';
import { classify } from './classify.ts';
import type { Entry } from './entry.ts';
import type { MigratorOptions } from './migrator-options.ts';
import { endedAt } from './pace.ts';
import { knownHost } from './reasons.ts';
import { CLOCK_SKEW_MS, ENDED, FIRST_RECORD_CHECK_MS, newestRecord, seen } from './records.ts';
import { hostOf, taskStateOf, type NovaMigration, type NovaServer } from './types.ts';

/**
 * `changes-since` looks back this far before Nova's clock as last seen: Nova stores `updated_at`
 * to the second, and a change may commit a moment after the request that missed it.
 */
const CHANGES_MARGIN_MS = 10_000;

/** The servers the migrator tracks, as the follow sees them. */
export interface Tracked {
  all(): readonly Entry[];
  get(id: string): Entry | undefined;
  /** The entry of a server, made on first sight. */
  entry(s: NovaServer): Entry;
}

export class Follow {
  readonly #o: MigratorOptions;
  readonly #tracked: Tracked;
  /** False after a 403 on the records (a policy that hides them): the listing alone decides. */
  #recordsReadable = true;
  /** Nova's clock as its answers last showed it: the next `changes-since`. */
  #novaClock: number | undefined;
  /** When this poll and the one before it were sent (our clock). */
  #pollAt: { previous: number | undefined; current: number } | undefined;
  /** The record's servers that left the host before this run were looked up (once, at the first listing). */
  #resumedRead = false;

  constructor(opts: MigratorOptions, tracked: Tracked) {
    this.#o = opts;
    this.#tracked = tracked;
  }

  /** One poll's reads: the listing (or the changes), then the records of attempts due a look. */
  async read(full: boolean): Promise<void> {
    const at = this.#o.now();
    if (full) await this.#listHost();
    else await this.#listChanges();
    this.#pollAt = { previous: this.#pollAt?.current, current: at };
    await this.#readRecords();
  }

  /** When the server settled, on our clock (see endedAt). */
  endedAt(e: Entry, now: number): number {
    return endedAt({
      now,
      since: this.#pollAt?.previous,
      novaNow: this.#novaClock,
      updated: e.server.updated,
    });
  }

  /** Every server on the host; one that left it since is read by itself (rare: a resume). */
  async #listHost(): Promise<void> {
    const { compute, source, signal } = this.#o;
    // the first changes-since starts at this listing, on Nova's clock (ours, less the skew, without one)
    let listedAt: number | undefined;
    const listed = await compute.listServersOnHost(source, signal, (ms) => (listedAt ??= ms));
    this.#novaClock ??= listedAt ?? this.#o.now() - CLOCK_SKEW_MS;
    const seen = new Set<string>();
    for (const s of listed) {
      seen.add(s.id);
      const e = this.#tracked.entry(s);
      e.server = s;
      // Evacuated rests on this listing: a server counted moved that is here again is not moved.
      if (e.state === 'succeeded' && knownHost(s) === source && classify(s, this.#o.nova).kind !== 'gone')
        e.reopen('counted moved, but the host listing shows it there again');
      // nor stopped: one drainer stopped that runs again (its owner started it) is stopped again
      else if (e.state === 'skipped' && e.stopped && knownHost(s) === source && !idleOff(s))
        e.reopen('stopped for the declared reboot, but the host listing shows it running again');
    }
    if (!this.#resumedRead) await this.#readResumed(seen);
    for (const e of this.#tracked.all()) {
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
   * A cold migration drainer asked for before this run (an agent restarted) may have landed while
   * no agent ran: its server is on another host now, waiting in VERIFY_RESIZE for drainer's confirm.
   * Each such server of the record is read once, and followed. Records of an earlier version did
   * not say which move they asked for: any move of theirs is read.
   */
  async #readResumed(listed: ReadonlySet<string>): Promise<void> {
    const { compute, signal, resumed } = this.#o;
    for (const [id, r] of Object.entries(resumed)) {
      if (listed.has(id) || this.#tracked.get(id) || r.stopped || !(r.attempts > 0)) continue;
      if (r.move === 'live-migrate') continue;
      try {
        this.#tracked.entry(await compute.getServer(id, signal));
      } catch (err) {
        if (!isNotFoundError(err)) throw err; // deleted since: nothing to confirm
      }
    }
    this.#resumedRead = true;
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
      const e = this.#tracked.get(s.id);
      if (e) e.server = s;
      else if (hostOf(s) === source && classify(s, this.#o.nova).kind !== 'gone')
        this.#tracked.entry(s).server = s;
    }
  }

  /**
   * Reads the host's migration records when an in-flight server is due a look (see
   * Entry.recordRead: after 1, 2, 4 … minutes of one attempt, and at the end of an abort's
   * grace). One request serves every due server; most evacuations never make it.
   */
  async #readRecords(): Promise<void> {
    const { compute, source, signal, log } = this.#o;
    const now = this.#o.now();
    const entries = this.#tracked.all();
    const due = entries.filter(
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
    const soon = entries.filter(
      (e) => e.state === 'migrating' && (e.recordCheckAt ?? Infinity) < now + FIRST_RECORD_CHECK_MS,
    );
    for (const e of new Set([...due, ...soon])) {
      e.recordRead(now);
      const r = newestRecord(records, e.id, e.action);
      if (r) e.record = seen(e.record, r, now);
    }
    await this.#confirmDue(due);
  }

  /**
   * Long past what a migration takes here and still "migrating" as we last saw it: if its record
   * says it ended (or the records cannot be read), read the server itself. A change the listings
   * missed then frees its slot now, not at its deadline. Rare: only attempts due a record read.
   */
  async #confirmDue(due: readonly Entry[]): Promise<void> {
    const { compute, signal } = this.#o;
    for (const e of due) {
      if (this.#recordsReadable && !ENDED.has(e.record?.status ?? '')) continue;
      try {
        e.server = await compute.getServer(e.id, signal);
      } catch (err) {
        if (!isNotFoundError(err)) throw err;
        e.finish('skipped', this.#o.now(), 'deleted during the evacuation');
      }
    }
  }
}

/** Powered off with nothing under way: a stop of drainer's that still holds. */
const idleOff = (s: NovaServer): boolean => s.status === 'SHUTOFF' && taskStateOf(s) === null;
