import * as z from './zod.ts';

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/** The duration schemas (the schema walk tells them from other number-or-string keys by this). */
const DURATIONS = new WeakSet<object>();
export const isDuration = (s: object): boolean => DURATIONS.has(s);

/**
 * Seconds, given as a number (seconds) or a string such as "500ms", "90s", "10m", "1h"; with
 * bounds, a value outside them is refused in seconds.
 */
export const duration = (bounds: { min?: number; max?: number } = {}) => {
  const outside = (n: number) =>
    (bounds.min !== undefined && n < bounds.min) || (bounds.max !== undefined && n > bounds.max);
  const range = `from ${bounds.min ?? 0} s to ${bounds.max ?? '∞'} s`;
  const s = z.pipe(
    z.union([z.number(), z.string()]),
    z.transform((value, ctx) => {
      if (typeof value === 'number') {
        if (Number.isFinite(value) && value >= 0 && !outside(value)) return value;
        ctx.issues.push({
          code: 'custom',
          message: outside(value)
            ? `expected a duration ${range}, got ${value}`
            : `expected a duration >= 0, got ${value}`,
          input: value,
        });
        return z.NEVER;
      }
      const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
      const seconds = m ? Number(m[1]) * (UNIT_SECONDS[m[2] ?? 's'] ?? 1) : Number.NaN;
      if (!m || outside(seconds)) {
        ctx.issues.push({
          code: 'custom',
          message: m
            ? `expected a duration ${range}, got "${value}"`
            : `expected a duration like "90s", "10m" or a number of seconds, got "${value}"`,
          input: value,
        });
        return z.NEVER;
      }
      return seconds;
    }),
  );
  DURATIONS.add(s);
  return s;
};
