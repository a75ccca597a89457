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
 * Folds a sample into the clock. The first sample of a migration starts the clock where its
 * first pass over the memory ended (estimated from the bytes processed so far): before that,
 * what is left falls by construction, so only from there can it stop falling.
 */
export function observe(
  clock: StallClock | undefined,
  migrationId: number | string,
  s: CopySample,
  runningSince: number,
): StallClock {
  if (!clock || String(clock.migrationId) !== String(migrationId)) {
    const ran = s.at - runningSince;
    const firstPassEnd =
      s.processed >= s.total && ran > 0 ? runningSince + (ran * s.total) / s.processed : s.at;
    return { migrationId, least: s.remaining, since: Math.min(s.at, firstPassEnd) };
  }
  if (s.remaining < clock.least - s.total * NOISE_SHARE)
    return { migrationId, least: s.remaining, since: s.at };
  return { ...clock, least: Math.min(clock.least, s.remaining) };
}

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
