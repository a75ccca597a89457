// The configuration reference in README.md says what each key takes; the loader must agree. Each
// key the table calls a duration takes "2m" (the README promises durations accept "10m"), each key
// it calls an integer or a percentage takes 3 and "10%", and each row's type is read from the
// README itself, so a wrong word in the table fails here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { README_BEGIN, README_END } from '../../src/config/reference.ts';
import { configSchema } from '../../src/config/schema.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const table = readme.slice(readme.indexOf(README_BEGIN), readme.indexOf(README_END));
/** `| key | type | default | env | description |` rows of the reference. */
const rows = [...table.matchAll(/^\| `([^`]+)` \| ([^|]+?(?:\\\|[^|]+?)*) \|/gm)].map((m) => ({
  key: m[1] ?? '',
  type: (m[2] ?? '').trim(),
}));

/** The config with `value` at the key's path. */
const at = (key: string, value: unknown): Record<string, unknown> =>
  key
    .split('.')
    .reverse()
    .reduce<unknown>((v, k) => ({ [k]: v }), value) as Record<string, unknown>;

/** True when the key takes the value (issues elsewhere, such as a sibling it requires, do not count). */
const accepted = (key: string, value: unknown): string | true => {
  const r = configSchema.safeParse(at(key, value));
  const mine = r.success ? undefined : r.error.issues.find((i) => i.path.join('.') === key);
  return mine ? mine.message : true;
};

describe('README configuration reference: each type is what the loader takes', () => {
  it('has the rows', () => expect(rows.length).toBeGreaterThan(50));

  it('every key called a duration takes "2m" and a number of seconds', () => {
    const durations = rows.filter((r) => r.type.startsWith('duration'));
    expect(durations.length).toBeGreaterThan(10);
    for (const { key } of durations) {
      expect({ key, '2m': accepted(key, '2m') }).toEqual({ key, '2m': true });
      expect({ key, 120: accepted(key, 120) }).toEqual({ key, 120: true });
    }
  });

  it('every key named for a time (…Timeout, …Interval, …Duration, …After, …Backoff) is called a duration', () => {
    const times = rows.filter(
      (r) =>
        /(Timeout|Interval|Duration|After|Backoff|GraceSeconds)$/.test(r.key) &&
        !/\.(abort|on)[A-Z]/.test(r.key),
    );
    expect(times.map((r) => r.key)).toContain('drainGate.holdTimeout');
    for (const { key, type } of times) expect({ key, type }).toEqual({ key, type: 'duration (s)' });
  });

  it('a key called a duration is one: a budget of nodes is not', () => {
    const type = rows.find((r) => r.key === 'fleet.maxConcurrentEvacuations')?.type;
    expect(type).toBe('integer \\| percentage');
    expect(accepted('fleet.maxConcurrentEvacuations', '10%')).toBe(true);
    expect(accepted('fleet.maxConcurrentEvacuations', 3)).toBe(true);
    expect(accepted('fleet.maxConcurrentEvacuations', '2m')).not.toBe(true);
  });

  it('every key called an integer takes a whole number and refuses a fraction', () => {
    for (const { key } of rows.filter((r) => r.type === 'integer')) {
      expect({ key, fraction: accepted(key, 1.5) === true }).toEqual({ key, fraction: false });
    }
  });
});
