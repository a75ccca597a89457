// Nova's migration records, read only where the host listing cannot tell the whole story:
// attempts running far longer than a live migration usually takes, and aborted attempts
// whose rollback is being followed. One request covers every such server of the host.
import type { NovaMigration } from './types.ts';

/** Small servers move in seconds; an attempt's record is first read after this long. */
export const FIRST_RECORD_CHECK_MS = 60_000;

/**
 * Nova resets task_state BEFORE it gives a rolled-back record its final status, but a failed
 * pre-live-migration marks the record `error` first and only then rolls back (RPC to the
 * destination included). So a failed record with the server still MIGRATING is normal for a
 * while; past this it is stuck (e.g. nova-compute stopped while the migration was queued).
 */
export const STUCK_AFTER_MS = 60_000;

/** `changes-since` is compared with Nova's clock, not ours: leave room for skew. */
export const CLOCK_SKEW_MS = 10 * 60_000;

const FAILED = new Set(['error', 'failed', 'cancelled']);
/** Nova's final statuses of a migration record (live, cold and resize; `done` from older releases). */
export const ENDED = new Set([
  'completed',
  'error',
  'failed',
  'cancelled',
  'done',
  'finished',
  'confirmed',
  'reverted',
]);
/** Nova's "it moved" statuses (live: completed; older releases and cold: done). */
const DONE = new Set(['completed', 'done']);

/**
 * A record that says the migration ended well while the listing still shows the server on its
 * source: past this (two polls, at most 5 s), it did not move (post-migration failed on the
 * destination, or the record lies), and waiting for the deadline would not change that.
 */
export const unmovedAfterMs = (pollSeconds: number): number => Math.min(5_000, 2 * pollSeconds * 1000);

const isFailedStatus = (status: string): boolean => FAILED.has(status);

/** What an attempt's record looked like, and since when (ours) it has been failed. */
export interface SeenRecord {
  id: number | string;
  status: string;
  failedSince: number | undefined;
  /** Since when (ours) it has said completed/done. */
  doneSince?: number | undefined;
}

const TYPE_OF: Record<string, string> = { 'live-migrate': 'live-migration', 'cold-migrate': 'migration' };

/**
 * The newest record of a server for this kind of move (ids only grow), or undefined.
 * Records without a type (before 2.23) count for either kind.
 */
export function newestRecord(
  records: readonly NovaMigration[],
  serverId: string,
  action: string,
): NovaMigration | undefined {
  const type = TYPE_OF[action];
  let newest: NovaMigration | undefined;
  for (const r of records) {
    if ((r.instance_uuid ?? r.server_uuid) !== serverId) continue;
    if (type && r.migration_type && r.migration_type !== type) continue;
    if (!newest || r.id > newest.id) newest = r;
  }
  return newest;
}

/** Folds a freshly read record into what we knew, keeping when it first looked failed. */
export function seen(prev: SeenRecord | undefined, r: NovaMigration, now: number): SeenRecord {
  const failed = isFailedStatus(r.status);
  const same = prev !== undefined && String(prev.id) === String(r.id);
  return {
    id: r.id,
    status: r.status,
    failedSince: failed ? (same && prev.failedSince !== undefined ? prev.failedSince : now) : undefined,
    doneSince: DONE.has(r.status) ? (same && prev.doneSince !== undefined ? prev.doneSince : now) : undefined,
  };
}
