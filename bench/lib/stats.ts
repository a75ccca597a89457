// Small numeric helpers the scenarios share: percentiles and the list-scheduling lower bound.

/** Nearest-rank percentile (p in 0..100) of the samples; NaN for none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? Number.NaN;
}

/**
 * No schedule of these jobs on `slots` identical machines finishes before this: the work
 * spread evenly (Σd / slots) or the longest job, whichever is larger.
 */
export function idealMakespan(durations: readonly number[], slots: number): number {
  const sum = durations.reduce((a, b) => a + b, 0);
  return Math.max(sum / slots, Math.max(0, ...durations));
}

/** Rounds to `digits` decimals (for the table; the JSON lines keep what the table shows). */
export function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Durations in ms drawn uniformly from [minMs, maxMs] by a seeded generator (repeatable runs). */
export function seededDurations(random: () => number, count: number, minMs: number, maxMs: number): number[] {
  return Array.from({ length: count }, () => Math.round(minMs + random() * (maxMs - minMs)));
}

/** Durations in ms drawn log-uniformly from [minMs, maxMs] (as many short copies as long ones per decade). */
export function seededLogDurations(
  random: () => number,
  count: number,
  minMs: number,
  maxMs: number,
): number[] {
  const lo = Math.log(minMs);
  const hi = Math.log(maxMs);
  return Array.from({ length: count }, () => Math.round(Math.exp(lo + random() * (hi - lo))));
}
