// The scheduler: keeps up to maxConcurrentMigrations + submitAhead servers submitted off one host
// (Nova runs M and queues the rest, so a slot never waits for our poll), learns how they are doing
// from the follow (follow.ts: one request per poll), hands in-flight servers to the tracker
// (track.ts: retries, deadlines, aborts) and the others to decide.ts (what each needs next),
// and stops when a listing of the host shows it empty or only blockers (and given-up servers)
// remain.
import { isAuthError, isCancelledError, isForbiddenError } from '../../errors.ts';
import type { WorkloadProgress } from '../../core/backends/plugin.ts';
import type { NovaServer } from './types.ts';
import { decide } from './decide.ts';
import { Entry, toProgress } from './entry.ts';
import { Follow } from './follow.ts';
import { Landings, slotsHeld } from './landing.ts';
import { cancel, leave } from './migrator-cancel.ts';
import type { MigratorOptions } from './migrator-options.ts';
import { startMove, type StartAction } from './migrator-start.ts';
import { stopOnHost } from './migrator-stop.ts';
import { Starting } from './starting.ts';
import { Pace, SHARE, mergeWithDecision } from './pace.ts';
import { FIRST_RECORD_CHECK_MS } from './records.ts';
import { Tracker } from './track.ts';
import { Watch } from './watch.ts';

export type { MigrationRecord, MigratorCompute, MigratorOptions } from './migrator-options.ts';

/** A migration record in these has not reached the host's slot yet: its deadline has not started. */
const NOT_STARTED = new Set(['accepted', 'scheduled', 'queued', 'pre-migrating']);
const MAX_POLL_FAILURES = 5;
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
/**
 * Unset, submitAhead also covers a post-migration per slot: a migration that landed holds its slot
 * until its record ends, and is counted so (landing.ts), so the queue above stays as long.
 */
const POST_MIGRATION_PER_SLOT = 1;

export class Migrator {
  readonly #o: MigratorOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #pace: Pace;
  readonly #follow: Follow;
  readonly #tracker: Tracker;
  readonly #watch: Watch;
  readonly #landings: Landings;
  /** A read of the migrations into the host, made after it was disabled, found none (undefined: not read). */
  #arrivalsClear: boolean | undefined;

  constructor(opts: MigratorOptions) {
    this.#o = opts;
    this.#pace = new Pace(opts.nova.pollInterval * 1000);
    this.#follow = new Follow(opts, {
      all: () => this.entries,
      get: (id) => this.#entries.get(id),
      entry: (s) => this.#entry(s),
    });
    this.#landings = new Landings(opts);
    this.#tracker = new Tracker(opts, this.#pace, this.#follow, this.#landings);
    this.#watch = new Watch(opts, this.#pace);
  }

  /** How many migrations may be submitted at once: Nova's M plus the ones queued behind them. */
  get #window(): number {
    const { nova, compute } = this.#o;
    // Below 2.65 a queued migration cannot be aborted, so nothing is queued unless the operator asks.
    const m = nova.maxConcurrentMigrations;
    return (
      m +
      (nova.submitAhead ??
        (compute.atLeast(65)
          ? Math.max(MIN_SUBMIT_AHEAD, SUBMIT_AHEAD_PER_SLOT * m) + POST_MIGRATION_PER_SLOT * m
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
    // a listing sent beside the disable starts the work, never ends it (list-ahead.ts)
    let ahead = this.#o.listedAhead === true;
    for (;;) {
      if (signal.aborted) break;
      const listedAhead = ahead && full;
      ahead &&= !full;
      try {
        await this.#poll(full);
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        if (isAuthError(err) || isForbiddenError(err) || ++failures >= MAX_POLL_FAILURES) throw err;
        this.#o.log.warn({ err }, 'polling Nova failed; trying again');
      }
      this.#report();
      let arriving = false;
      if (failures === 0 && this.#done()) {
        if (!full || listedAhead) {
          full = true; // looks done: check the host itself, at once
          continue;
        }
        // a server on its way in (scheduled before the host was disabled) lands after this listing,
        // unless a read while the migrations ran found none
        arriving = this.#arrivalsClear === true ? false : await this.#arriving();
        if (!arriving) break;
      }
      full = arriving; // once it has landed, the host's listing takes it on
      try {
        const tail = !this.entries.some((e) => e.state === 'pending' && e.next !== undefined);
        // a migration parked until its stall decision ends no sooner than that (dueIn has it)
        const inFlight = this.entries.filter((e) => e.state === 'migrating' && !this.#watch.parked(e)).length;
        const now = this.#o.now();
        const next = this.#pace.next({ inFlight, now, dueIn: this.#dueIn(), tail, working: this.#working() });
        // Read the arrivals now, within the wait: the host is disabled, so nothing is scheduled into
        // it after this read, and an empty one lets the listing that finds the host empty end the run
        // (a failed one is made again there, as before).
        if (this.#arrivalsClear === undefined && !arriving)
          this.#arrivalsClear = await this.#arriving().then(
            (a) => !a,
            () => false,
          );
        await this.#until(now + next);
      } catch {
        // aborted: handled at the top of the loop
      }
    }
    // a cancel (uncordon) takes back what it can; a shutdown leaves every submitted migration to
    // Nova, where the next agent adopts it from the record (aborting would make it submit them again)
    if (signal.aborted && isCancelledError(signal.reason)) await cancel(this.#o, this.#tracker, this.entries);
    else if (signal.aborted) leave(this.entries);
    this.#report();
    return this.entries.map((e) => toProgress(e, this.#o.now()));
  }

  /**
   * Sleeps until the next poll; copy reads that fall due before it are made on their own (a stall
   * decision needs no listing of the host).
   */
  async #until(poll: number): Promise<void> {
    const { signal, sleep, now } = this.#o;
    // A stall decision due a little after the poll ends a parked slot (forced) soon after: one poll
    // after that end sees both, where a poll before it would be followed by another at the end.
    const decision = this.#watch.nextDue(this.entries.filter((e) => this.#watch.parked(e)));
    const merged = decision !== undefined && mergeWithDecision(now(), poll, decision);
    if (merged) poll = decision;
    for (;;) {
      const due = this.#watch.nextDue(this.entries);
      if (due === undefined || due > poll || signal.aborted) break;
      await sleep(Math.max(0, due - now()), signal);
      await this.#watch.read(this.entries);
      this.#report();
      // the forced end the decision brought is the poll; what the reads made due, no later
      if (merged) poll = Math.max(poll, ...this.entries.map((e) => this.#forcedEnd(e) ?? 0));
      poll = Math.min(poll, now() + (this.#dueIn() ?? Infinity));
    }
    await sleep(Math.max(0, poll - now()), signal);
  }

  /** Nova's slots on the host, and how many are not held by a parked migration (see Watch.parked). */
  #working(): { slots: number; of: number } {
    const of = this.#o.nova.maxConcurrentMigrations;
    const parked = this.entries.filter(
      (e) => e.state === 'migrating' && e.deadlineFrom !== undefined && this.#watch.parked(e),
    ).length;
    return { slots: Math.max(0, of - parked), of };
  }

  #report(): void {
    this.#o.progress(this.entries.map((e) => toProgress(e, this.#o.now())));
  }

  /** Is a migration into the host still on its way? A failed read counts as yes: look again. */
  async #arriving(): Promise<boolean> {
    try {
      const arriving = await this.#o.compute.listArrivingMigrations(this.#o.source, this.#o.signal);
      if (arriving.length)
        this.#o.log.info(
          { servers: arriving.map((m) => m.instance_uuid ?? m.server_uuid) },
          'servers still migrating into the host: waiting for them to land, then moving them too',
        );
      return arriving.length > 0;
    } catch (err) {
      if (isAuthError(err) || isForbiddenError(err)) throw err;
      this.#o.log.warn({ err }, 'reading the migrations into the host failed; looking again');
      return true;
    }
  }

  /** Nothing moving, nothing left to start: only succeeded, failed, skipped or blocked servers. */
  #done(): boolean {
    return this.entries.every((e) => e.state !== 'migrating' && e.state !== 'pending');
  }

  /** When a migration forced to complete is expected to have ended, while it is still ahead. */
  #forcedEnd(e: Entry): number | undefined {
    return e.state === 'migrating' && e.forcedEndAt !== undefined && e.forcedEndAt > this.#o.now()
      ? e.forcedEndAt
      : undefined;
  }

  /** The nearest moment something is due on our side, from now. */
  #dueIn(): number | undefined {
    const now = this.#o.now();
    // a record read that a counter read comes before is not due: the counters make it needless
    const due = this.entries.flatMap((e) =>
      e.terminal
        ? []
        : [
            e.state === 'pending' ? e.notBefore : undefined,
            e.abort?.until,
            e.confirmsFailed > 0 ? e.confirmAgainAt : undefined, // a lost confirm, sent again soon
            (this.#watch.nextDue([e]) ?? Infinity) < (e.recordCheckAt ?? -Infinity)
              ? undefined
              : e.recordCheckAt,
            this.#forcedEnd(e),
          ],
    );
    const at = due.filter((t): t is number => t !== undefined);
    return at.length ? Math.min(...at) - now : undefined;
  }

  async #poll(full: boolean): Promise<void> {
    await this.#follow.read(full);
    this.#startClocks();
    await this.#watch.read(this.entries);
    for (const e of this.entries) if (!e.terminal) await this.#evaluate(e);
    if (this.#heldBack()) await this.#landings.read(this.entries);
    await this.#startMore();
  }

  /**
   * Only migrations that landed and may still hold Nova's slot (landing.ts) keep a waiting server
   * out of the window, and what is queued in Nova behind the slots (were they all over) would not
   * outlast the pace's next look: one read of the host's records tells which of them ended. Never
   * with the default window (the holds take at most M of it, which it has on top of its queue); with
   * a small nova.submitAhead it keeps the slots busy.
   */
  #heldBack(): boolean {
    const slots = this.#o.nova.maxConcurrentMigrations;
    const held = slotsHeld(this.entries, slots);
    const moving = this.entries.filter((e) => e.state === 'migrating').length;
    return (
      held > 0 &&
      moving < this.#window &&
      moving + held >= this.#window &&
      moving - slots < SHARE * moving &&
      this.entries.some((e) => this.#move(e) !== undefined)
    );
  }

  /** The move a pending server starts once the window has room (a confirm or a stop needs none). */
  #move(e: Entry): StartAction | undefined {
    if (e.state !== 'pending' || !e.next || (e.notBefore ?? 0) > this.#o.now()) return undefined;
    if (e.next === 'confirm-resize' || e.next === 'stop') return undefined;
    if (e.last && this.#othersLeft()) return undefined; // nova.onError last: after every other server
    return e.next;
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
    this.#watch.armed(e, now);
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
      await this.#tracker.track(e, now);
      return;
    }
    await decide(this.#o, this.#watch, e, now);
  }

  async #startMore(): Promise<void> {
    const { now, signal } = this.#o;
    // the fallback at a host shutdown's deadline stops what is still here: a move (or a queued one
    // taken out and submitted again) would keep the server running and unstopped as the host goes down
    if ((this.#o.heldUntil?.() ?? -Infinity) > now()) return;
    // Moves that take a free slot of Nova's go out side by side (an evacuation's first M), as soon
    // as Nova takes them; those queued behind the slots one at a time, in order, as Nova runs them.
    const starting = new Starting();
    const slots = this.#o.nova.maxConcurrentMigrations;
    try {
      for (const e of this.entries) {
        if (signal.aborted) break;
        if (e.state !== 'pending' || !e.next || (e.notBefore ?? 0) > now()) continue;
        if (e.next === 'confirm-resize') {
          // Resized onto this host and waiting: confirm, then it moves like any other server.
          await this.#tracker.confirm(e);
          continue;
        }
        if (e.next === 'stop') {
          await stopOnHost(this.#o, e);
          continue;
        }
        const move = this.#move(e);
        const inFlight = this.#inFlight() + starting.size;
        if (move === undefined || inFlight >= this.#window) continue; // confirms still run
        if (inFlight < slots) starting.add(e, this.#start(e, move, true));
        else {
          await starting.settled();
          await this.#start(e, move, this.#inFlight() < slots);
        }
      }
    } finally {
      await starting.settled();
    }
  }

  /** Servers other than the onError-last ones still to move (waiting ones too: busy, an owner asked). */
  #othersLeft(): boolean {
    return this.entries.some((x) => !x.last && (x.state === 'migrating' || x.state === 'pending'));
  }

  /** Submitted and not over in Nova: moving, or landed with the record maybe still running. */
  #inFlight(): number {
    const moving = this.entries.filter((e) => e.state === 'migrating').length;
    return moving + slotsHeld(this.entries, this.#o.nova.maxConcurrentMigrations);
  }

  /** `slotFree`: one of Nova's slots is free for it (else a live one queues behind them). */
  async #start(e: Entry, action: StartAction, slotFree: boolean): Promise<void> {
    await startMove(
      this.#o,
      { tracker: this.#tracker, slotFree, slotFrom: (x, now) => this.#slotFrom(x, now) },
      e,
      action,
    );
  }
}
