// One server's life during an evacuation, as the migrator tracks it.
import type { PlannedAction, WorkloadProgress, WorkloadState } from '../../core/backends/plugin.ts';
import type { MoveAction } from './classify.ts';
import type { MigrationRecord } from './migrator-options.ts';
import { FIRST_RECORD_CHECK_MS, type SeenRecord } from './records.ts';
import type { CopySample, StallClock } from './stall.ts';
import { memoryField, type NovaServer } from './types.ts';
import { novaPresence, presenceField, type HostPresence } from '../on-host.ts';

export class Entry {
  readonly id: string;
  readonly name: string;
  readonly source: string;
  server: NovaServer;
  state: WorkloadState = 'pending';
  action: PlannedAction = 'none';
  /** What to start when a slot is free (pending servers only). */
  next: MoveAction | undefined;
  /** Attempts over the whole evacuation, including before a restart. */
  attempts: number;
  /** Attempts in this run: the retry budget. */
  tries = 0;
  startedAt: number | undefined;
  attemptStartedAt: number | undefined;
  /** When this attempt's deadline started: when it could hold a Nova slot (unset while queued). */
  deadlineFrom: number | undefined;
  finishedAt: number | undefined;
  notBefore: number | undefined;
  waitingSince: number | undefined;
  target: string | undefined;
  message: string | undefined;
  migrationId: number | string | undefined;
  /** When a confirm may go again: a resend window after one Nova took, soon after one that failed. */
  confirmAgainAt: number | undefined;
  confirmsSent = 0;
  /** Confirms in a row that failed (the answer lost, a 5xx): the next one waits twice as long. */
  confirmsFailed = 0;
  /** Past its deadline: what the abort did, and until when its rollback is followed. */
  abort: { note: string; sent: boolean; until: number } | undefined;
  /** When this attempt's migration record is next read, and the gap to the one after. */
  recordCheckAt: number | undefined;
  recordCheckGap = FIRST_RECORD_CHECK_MS;
  /** The attempt's newest migration record as last read. */
  record: SeenRecord | undefined;
  /** The running live migration's counters as last read, and when they are next read. */
  copy: CopySample | undefined;
  copyCheckAt: number | undefined;
  /** Its stall clock (kept across attempts: it is per migration id) and what was done about a stall. */
  stall: StallClock | undefined;
  stallAction: 'force-complete' | 'abort' | 'wait' | undefined;
  /** Why the attempt that was aborted as stalled failed (the retry's reason). */
  stallNote: string | undefined;
  /** The migration we forced to complete (from the record too), and when it should be over. */
  forced: number | string | undefined;
  forcedEndAt: number | undefined;
  /** nova.onError last: a server in ERROR, started only once nothing else is left to start or moving. */
  last = false;
  /** Way out stop: drainer stopped it (from the record too). */
  stopped: boolean;
  /**
   * Found moving with no attempt of ours (its owner resized or migrated it): followed, but its end
   * is theirs, not a failed attempt of drainer's, and so is its confirm.
   */
  byOthers = false;
  /** Way out notify: when its owner was first asked (from the record too). */
  notifiedAt: number | undefined;
  /**
   * Settled after a live migration whose record was not seen ended: it may still hold Nova's slot
   * on the source (landing.ts), so it counts toward the window until a read shows the record ended.
   */
  slotHeld = false;
  /** Request ids of drainer's move calls Nova answered (the record keeps the newest). */
  readonly requests = new Set<string>();
  /** A move call of drainer's whose answer was lost: Nova may have taken it (see whose.ts). */
  lostCall: { action: 'live-migrate' | 'cold-migrate'; at: number } | undefined;
  /**
   * Past its deadline and not abortable (a cold migration, someone else's move, or abort not
   * possible or not wanted): still followed, and judged by where the server lands.
   */
  overdue: string | undefined;

  constructor(server: NovaServer, source: string, resumed?: MigrationRecord) {
    this.id = server.id;
    this.name = server.name;
    this.source = source;
    this.server = server;
    this.attempts = resumed?.attempts ?? 0;
    this.migrationId = resumed?.migrationId;
    const t = resumed ? Date.parse(resumed.startedAt) : NaN;
    this.startedAt = Number.isNaN(t) ? undefined : t;
    this.forced = resumed?.forced;
    this.stopped = resumed?.stopped === true;
    // asked for before a restart: this run has no answer of that call, as if it were lost
    if (resumed?.move && this.startedAt !== undefined)
      this.lostCall = { action: resumed.move, at: this.startedAt };
    const asked = resumed?.notifiedAt ? Date.parse(resumed.notifiedAt) : NaN;
    this.notifiedAt = Number.isNaN(asked) ? undefined : asked;
    const since = resumed?.stall ? Date.parse(resumed.stall.since) : NaN;
    if (resumed?.stall && !Number.isNaN(since)) {
      this.stall = { migrationId: resumed.stall.migrationId, least: resumed.stall.least, since };
    }
  }

  get terminal(): boolean {
    return this.state === 'succeeded' || this.state === 'failed' || this.state === 'skipped';
  }

  finish(state: 'succeeded' | 'failed' | 'skipped', now: number, message?: string): void {
    this.state = state;
    this.finishedAt = now;
    this.next = undefined;
    this.message = message;
  }

  /** Counted moved, yet the host's listing shows it there again: it has to move after all. */
  reopen(message: string): void {
    this.state = 'pending';
    this.slotHeld = false;
    this.finishedAt = undefined;
    this.target = undefined;
    this.message = message;
  }

  block(reason: string): void {
    this.state = 'blocked';
    this.action = 'none';
    this.next = undefined;
    this.message = reason;
  }

  /** Found already migrating (a restart, or someone else): track it, do not start another. */
  adopt(action: 'live-migrate' | 'cold-migrate', now: number): void {
    this.state = 'migrating';
    this.action = action;
    this.next = undefined;
    this.attempts = Math.max(this.attempts, 1);
    this.tries = Math.max(this.tries, 1);
    this.startedAt ??= now;
    this.attemptStartedAt = this.startedAt;
    this.message = undefined;
    this.#newAttempt(now);
    // Found running: its deadline counts from the recorded start, as it may hold a slot already.
    this.deadlineFrom = this.attemptStartedAt;
  }

  /** Someone else's move ended with the server still here: drainer decides afresh, no attempt counted. */
  handBack(message: string): void {
    this.state = 'pending';
    this.action = 'none';
    this.next = undefined;
    this.byOthers = false;
    this.attempts = 0;
    this.tries = 0;
    this.startedAt = undefined;
    this.attemptStartedAt = undefined;
    this.deadlineFrom = undefined;
    this.message = message;
  }

  wait(reason: string, now: number): void {
    this.state = 'pending';
    this.next = undefined;
    this.message = reason;
    this.waitingSince ??= now;
  }

  ready(action: MoveAction): void {
    this.state = 'pending';
    this.action = action;
    this.next = action;
    this.waitingSince = undefined;
  }

  retryLater(at: number, message: string): void {
    this.state = 'pending';
    this.notBefore = at;
    this.message = message;
  }

  started(action: MoveAction, now: number): void {
    this.state = 'migrating';
    this.slotHeld = false; // a new attempt counts as itself
    this.action = action;
    this.next = undefined;
    this.notBefore = undefined;
    this.message = undefined;
    this.attempts += 1;
    this.tries += 1;
    this.startedAt ??= now;
    this.attemptStartedAt = now;
    this.#newAttempt(now);
  }

  /** The next record read comes after a doubled gap: long migrations cost a few reads, not one per poll. */
  recordRead(now: number): void {
    this.recordCheckAt = now + this.recordCheckGap;
    this.recordCheckGap *= 2;
  }

  #newAttempt(now: number): void {
    this.overdue = undefined;
    this.confirmAgainAt = undefined;
    this.deadlineFrom = undefined;
    this.confirmsSent = 0;
    this.confirmsFailed = 0;
    this.abort = undefined;
    this.record = undefined;
    this.copy = undefined;
    this.copyCheckAt = undefined;
    this.stallAction = undefined;
    this.stallNote = undefined;
    this.forcedEndAt = undefined;
    this.recordCheckGap = FIRST_RECORD_CHECK_MS;
    this.recordCheckAt = now + FIRST_RECORD_CHECK_MS;
  }
}

/** Where the server is (on-host.ts); each deletion's message begins "deleted" (and its server may not be read again). */
const presenceOf = (e: Entry): HostPresence =>
  e.state === 'skipped' && /^deleted/.test(e.message ?? '') ? 'gone' : novaPresence(e.server.status);

export function toProgress(e: Entry, now: number): WorkloadProgress {
  const end = e.finishedAt ?? now;
  return {
    id: e.id,
    name: e.name,
    state: e.state,
    action: e.action,
    source: e.source,
    ...(e.target ? { target: e.target } : {}),
    attempts: e.attempts,
    ...(e.startedAt !== undefined
      ? { startedAt: new Date(e.startedAt).toISOString(), durationMs: Math.max(0, end - e.startedAt) }
      : {}),
    ...(e.message ? { message: e.message } : {}),
    ...presenceField(presenceOf(e)),
    ...(e.server.tenant_id ? { owner: e.server.tenant_id } : {}),
    ...memoryField(e.server),
    ...(e.copy && e.state === 'migrating'
      ? {
          copy: {
            totalBytes: e.copy.total,
            remainingBytes: e.copy.remaining,
            converging: e.stallAction === undefined,
            ...(e.stallAction ? { stallAction: e.stallAction } : {}),
          },
        }
      : {}),
  };
}
