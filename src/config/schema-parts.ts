// The building blocks every configuration section uses: a description on each key (the reference table and README
// show it), defaults, integers and budgets.
import * as z from './zod.ts';

/** Optional, with the description the reference table and README show. */
export const opt = <T extends z.ZodMiniType>(s: T, description: string) =>
  z.optional(s).check(z.describe(description));

/** With a default, and the description the reference table and README show. */
export const dflt = <T extends z.ZodMiniType>(
  s: T,
  value: z.core.util.NoUndefined<z.output<T>>,
  description: string,
) => z._default(s, value).check(z.describe(description));

export const int = (min: number, max?: number) =>
  z.number().check(z.int(), z.minimum(min), ...(max === undefined ? [] : [z.maximum(max)]));

/** An integer ≥ 0, or a percentage such as "10%"; a string of digits is the integer (env values). */
export const budget = () =>
  z.pipe(
    z.union([z.number(), z.string()]),
    z.transform((value, ctx): number | `${number}%` => {
      const m = /^\s*(\d+)(%?)\s*$/.exec(String(value));
      if (m && (typeof value === 'string' || Number.isInteger(value))) {
        const n = Number(m[1]);
        if (!m[2]) return n;
        if (n >= 1 && n <= 100) return `${n}%`;
      }
      ctx.issues.push({
        code: 'custom',
        message: `expected an integer >= 0 or a percentage such as "10%" (1-100), got ${JSON.stringify(value)}`,
        input: value,
      });
      return z.NEVER;
    }),
  );

/** A section whose default is the section's own defaults. */
export const section = <T extends z.ZodMiniObject>(s: T) => z._default(s, s.parse({}) as never);
