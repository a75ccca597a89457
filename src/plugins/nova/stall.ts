// Stall detection: a live migration is stalled when the least memory_remaining_bytes it has
// reached has not improved for nova.stallAfter. Pure: the counters come from the watch
// (watch.ts), which also carries out nova.onStall.
import type { NovaConfig } from '../../config/schema.ts';
import type { NovaMigration } from './types.ts';

/** One reading of a migration's counters (bytes), on our clock. */
export interface CopySample {
  at: number;
  total: number;
  processed: number;
  remaining: number;
}

/** The least remaining seen and since when it has not improved (kept in the record across restarts). */
export interface StallClock {
  migrationId: number | string;
  least: number;
  since: number;
  /** The first sample past the first pass, kept until a second one gives the copy rate. */
  first?: { at: number; processed: number };
}

/**
 * A fall smaller than this share of the memory is noise (libvirt's counters wobble as pages are
 * dirtied between rounds), not progress: it lowers the least but does not restart the clock.
 */
const NOISE_SHARE = 0.01;

/** The sample in a migration's counters, or undefined while libvirt has not reported them. */
export function sampleOf(m: NovaMigration, at: number): CopySample | undefined {
  const total = m.memory_total_bytes;
  const remaining = m.memory_remaining_bytes;
  if (typeof total !== 'number' || typeof remaining !== 'number' || total <= 0) return undefined;
  const processed = typeof m.memory_processed_bytes === 'number' ? m.memory_processed_bytes : 0;
  return { at, total, processed, remaining };
}

/**
 * When the migration can have started running: no sooner than `earliest` (its submit), no later
 * than `latest` (when it was seen to hold a slot; the same when a slot was free at the submit).
 */
export interface Started {
  earliest: number;
  latest: number;
}

/** Bytes per ms between two samples of one migration. */
export const rateOf = (a: { at: number; processed: number }, b: { at: number; processed: number }): number =>
  (b.processed - a.processed) / (b.at - a.at);

/**
 * Folds a sample into the clock. The clock starts where the first pass over the memory ended:
 * before that, what is left falls by construction. With the copy rate known on this host (`rate`),
 * the first sample past that pass dates its end from the bytes processed; without, it is bounded
 * by the latest the migration can have started, and a second sample that shows no progress
 * measures the rate and dates it.
 */
export function observe(
  clock: StallClock | undefined,
  migrationId: number | string,
  s: CopySample,
  started: Started,
  rate?: number,
): StallClock {
  const pastFirstPass = s.processed >= s.total;
  if (!clock || String(clock.migrationId) !== String(migrationId)) {
    const fresh = { migrationId, least: s.remaining };
    if (!pastFirstPass) return { ...fresh, since: s.at };
    if (rate !== undefined && rate > 0) {
      const end = Math.max(s.at - (s.processed - s.total) / rate, started.earliest + s.total / rate);
      return { ...fresh, since: Math.min(s.at, end) };
    }
    const ran = s.at - started.latest;
    const end = ran > 0 ? started.latest + (ran * s.total) / s.processed : s.at;
    // started with a free slot: the bound is its start (give or take Nova's scheduling), no need to measure
    const exact = started.earliest === started.latest;
    return {
      ...fresh,
      since: Math.min(s.at, end),
      ...(exact ? {} : { first: { at: s.at, processed: s.processed } }),
    };
  }
  if (s.remaining < clock.least - s.total * NOISE_SHARE)
    return { migrationId, least: s.remaining, since: s.at };
  const { first, ...rest } = clock;
  const least = Math.min(clock.least, s.remaining);
  if (!first || s.at <= first.at || s.processed <= first.processed) return { ...clock, least };
  const firstPassEnd = s.at - (s.processed - s.total) / rateOf(first, s);
  return { ...rest, least, since: Math.min(clock.since, firstPassEnd) };
}

/** The clock still waits for the sample that measures the copy rate. */
export const wantsRate = (clock: StallClock | undefined): boolean => clock?.first !== undefined;

export const isStalled = (clock: StallClock | undefined, now: number, stallAfterMs: number): boolean =>
  clock !== undefined && now - clock.since >= stallAfterMs;

/** What nova.onStall does on this cloud: the action, or wait with the reason it cannot. */
export function stallAction(
  nova: Pick<NovaConfig, 'onStall'>,
  atLeast: (minor: number) => boolean,
): { action: 'force-complete' | 'abort' | 'wait'; fallback?: string } {
  if (nova.onStall === 'force-complete' && !atLeast(22)) {
    return { action: 'wait', fallback: 'force-complete needs compute microversion 2.22' };
  }
  if (nova.onStall === 'abort' && !atLeast(24)) {
    return { action: 'wait', fallback: 'abort needs compute microversion 2.24' };
  }
  return { action: nova.onStall };
}
