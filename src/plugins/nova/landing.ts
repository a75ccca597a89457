// A live migration holds Nova's slot on the source until its record ends, not until its server
// shows the new host. Nova's source runs the whole migration in one task of its live-migration
// executor (max_concurrent_live_migrations of them): post_live_migration_at_destination switches the
// server's host, then the source audits its resources (update_available_resource) and only then
// marks the record `completed` (nova/compute/manager.py _post_live_migration), seconds later on a
// busy host; a rollback likewise gives the record its final status after the server's task state
// is reset. Until then the next queued migration does not start, so drainer's window counts it.
import { isAuthError, isForbiddenError } from '../../errors.ts';
import type { Entry } from './entry.ts';
import type { MigratorOptions } from './migrator-options.ts';
import { CLOCK_SKEW_MS, ENDED, newestRecord } from './records.ts';
import type { NovaMigration } from './types.ts';

/** The entries whose last live migration may still hold Nova's slot. */
const holdingSlot = (entries: readonly Entry[]): Entry[] => entries.filter((e) => e.slotHeld);

/**
 * How many of the host's M slots the holds can take: each unfinished record keeps one of Nova's M
 * executor workers, so no more than M of them are unfinished at once, however many are not yet seen
 * ended. Counting that bound needs no request.
 */
export const slotsHeld = (entries: readonly Entry[], slots: number): number =>
  Math.min(holdingSlot(entries).length, slots);

/** Frees the holds whose records (a read of the host's since the oldest hold) say the migration ended. */
function releaseEnded(held: readonly Entry[], records: readonly NovaMigration[]): void {
  for (const e of held) {
    const r = newestRecord(records, e.id, 'live-migrate');
    // no record to be seen (an old Nova, a page that ends before it): nothing says it holds one
    if (!r || ENDED.has(r.status)) e.slotHeld = false;
  }
}

export class Landings {
  readonly #o: MigratorOptions;
  /** False after a 403 on the records: a migration then counts as over when its server settles. */
  #readable = true;

  constructor(opts: MigratorOptions) {
    this.#o = opts;
  }

  /** The server settled after a live migration of ours: it counts until its record is seen ended. */
  settled(e: Entry): void {
    e.slotHeld = this.#readable && e.action === 'live-migrate';
  }

  /** One read of the host's migration records for every hold; never throws but for auth or a cancel. */
  async read(entries: readonly Entry[]): Promise<void> {
    const held = holdingSlot(entries);
    if (held.length === 0) return;
    const { compute, source, signal, log } = this.#o;
    const oldest = Math.min(...held.map((e) => e.attemptStartedAt ?? this.#o.now()));
    try {
      releaseEnded(held, await compute.listHostMigrations(source, new Date(oldest - CLOCK_SKEW_MS), signal));
    } catch (err) {
      if (signal.aborted || isAuthError(err)) throw err;
      if (isForbiddenError(err)) {
        this.#readable = false;
        for (const e of held) e.slotHeld = false;
        log.warn(
          { err },
          'reading migration records is forbidden: a migration counts as over once its server shows the new host',
        );
      } else log.warn({ err }, 'reading migration records failed; the migrations that landed still count');
    }
  }
}
