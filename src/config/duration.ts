import * as z from './zod.ts';

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/** Seconds, given as a number (seconds) or a string such as "500ms", "90s", "10m", "1h". */
export const duration = () =>
  z.pipe(
    z.union([z.number(), z.string()]),
    z.transform((value, ctx) => {
      if (typeof value === 'number') {
        if (Number.isFinite(value) && value >= 0) return value;
        ctx.issues.push({ code: 'custom', message: `expected a duration >= 0, got ${value}`, input: value });
        return z.NEVER;
      }
      const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
      if (!m) {
        ctx.issues.push({
          code: 'custom',
          message: `expected a duration like "90s", "10m" or a number of seconds, got "${value}"`,
          input: value,
        });
        return z.NEVER;
      }
      return Number(m[1]) * (UNIT_SECONDS[m[2] ?? 's'] ?? 1);
    }),
  );
