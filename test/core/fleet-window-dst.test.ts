// Maintenance windows against a minute-by-minute reference across every DST change of 2026 in
// four zones (both hemispheres; Santiago changes at midnight). The reference reads each minute's
// wall clock with Intl and applies the README's rule directly: open while the local weekday and
// time fall inside the window; a window wholly inside a spring-forward gap opens at the change for
// its usual length. drainer's windowOpen and nextOpening must agree with it at every minute.
import { describe, expect, it } from 'vitest';
import { nextOpening, windowOpen, type Day, type MaintenanceWindow } from '../../src/core/fleet/window.ts';

const MIN = 60_000;
const ZONES = ['Europe/Berlin', 'America/New_York', 'America/Santiago', 'Australia/Sydney'] as const;
const DAY_NAMES: readonly Day[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** Windows around the hours where the zones change: in the gap, across it, in the doubled hour, at midnight. */
const SHAPES: readonly Omit<MaintenanceWindow, 'timeZone'>[] = [
  { days: ['sun'], start: '02:00', end: '03:00' }, // the whole gap (Berlin, New York, Sydney)
  { days: ['sun'], start: '02:30', end: '02:45' }, // inside the gap
  { days: ['sun'], start: '01:30', end: '03:30' }, // across it
  { days: ['sun'], start: '02:30', end: '05:00' }, // starts in it
  { days: ['sun'], start: '00:00', end: '01:00' }, // Santiago's gap (midnight)
  { days: ['sun'], start: '00:15', end: '02:00' },
  { days: ['sat'], start: '23:30', end: '00:30' }, // crosses midnight into Santiago's gap
  { days: ['sat'], start: '23:00', end: '01:00' },
  { days: ['sun', 'mon'], start: '01:00', end: '02:30' }, // the doubled hour (fall back)
  { days: ['sat', 'sun'], start: '22:00', end: '02:15' },
];

const formats = new Map<string, Intl.DateTimeFormat>();
/** The wall clock at instant t: weekday and minutes since local midnight, and the local date (ms as UTC). */
function wall(t: number, timeZone: string): { day: number; minute: number; date: number } {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formats.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(t)).map((x) => [x.type, x.value]));
  const date = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day));
  return { day: new Date(date).getUTCDay(), minute: Number(p.hour) * 60 + Number(p.minute), date };
}

const iso = (t: number | undefined) => (t === undefined ? 'none' : new Date(t).toISOString());
const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

/** Instants (to the minute) in 2026 at which the zone's UTC offset changes, found by scanning hours. */
function changes2026(timeZone: string): number[] {
  const off = (t: number) => {
    const w = wall(t, timeZone);
    return w.date + w.minute * MIN - Math.floor(t / MIN) * MIN;
  };
  const out: number[] = [];
  for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t += 60 * MIN) {
    if (off(t) === off(t + 60 * MIN)) continue;
    let m = t + MIN;
    while (off(m) === off(t)) m += MIN;
    out.push(m);
  }
  return out;
}

type Wall = ReturnType<typeof wall>;

/** The wall clock of every minute from `from` - 1 min to `to` (the reference's only input). */
function walls(timeZone: string, from: number, to: number): Wall[] {
  const out: Wall[] = [];
  for (let t = from - MIN; t < to; t += MIN) out.push(wall(t, timeZone));
  return out;
}

/**
 * The reference: every minute open or not, by the README's rule, from the wall clock alone.
 * `walls[i + 1]` is the wall clock of the i-th minute.
 */
function reference(w: Omit<MaintenanceWindow, 'timeZone'>, walls: readonly Wall[]): boolean[] {
  const start = minutes(w.start);
  const end = minutes(w.end);
  const len = end > start ? end - start : end + 1440 - start;
  const listed = (d: number) => w.days.includes(DAY_NAMES[(d + 7) % 7]!);
  const open = walls
    .slice(1)
    .map(({ day, minute }) =>
      end > start
        ? listed(day) && minute >= start && minute < end
        : (listed(day) && minute >= start) || (listed(day - 1) && minute < end),
    );
  // spring forward: the wall clock skips from the minute before i to minute i
  for (let i = 0; i < open.length; i++) {
    const a = walls[i]!;
    const b = walls[i + 1]!;
    const before = a.date / MIN + a.minute + 1; // the first skipped wall minute
    const after = b.date / MIN + b.minute; // the wall minute at the change
    if (after <= before) continue;
    for (const date of [a.date, b.date]) {
      const s = date / MIN + start;
      if (listed(new Date(date).getUTCDay()) && s >= before && s + len <= after)
        for (let j = i; j < Math.min(open.length, i + len); j++) open[j] = true;
    }
  }
  return open;
}

const CASES = ZONES.flatMap((timeZone) =>
  changes2026(timeZone).map((change) => ({ timeZone, change, label: new Date(change).toISOString() })),
);

describe('maintenance windows across every 2026 DST change, minute by minute', () => {
  it('finds two changes a year in each zone', () => {
    expect(CASES.map((c) => c.timeZone)).toEqual(ZONES.flatMap((z) => [z, z]));
  });

  it.each(CASES)('$timeZone, change at $label', ({ timeZone, change }) => {
    // from a day before the change to a day after; the next opening may lie up to 8 days further
    const from = change - 1440 * MIN;
    const to = change + 1440 * MIN;
    const clock = walls(timeZone, from, to + 8 * 1440 * MIN);
    const wrong: string[] = [];
    for (const shape of SHAPES) {
      const w: MaintenanceWindow = { ...shape, timeZone };
      const ref = reference(shape, clock);
      const nextRef: (number | undefined)[] = new Array<number | undefined>(ref.length);
      for (let i = ref.length - 1, next: number | undefined; i >= 0; i--) {
        if (ref[i]) next = from + i * MIN;
        nextRef[i] = next;
      }
      const name = `${w.days.join(',')} ${w.start}-${w.end}`;
      for (let i = 0, t = from; t < to; i++, t += MIN) {
        if (windowOpen(w, t) !== ref[i] && wrong.length < 20)
          wrong.push(`${name} at ${iso(t)}: open ${!ref[i]}, reference ${ref[i]}`);
        // the next opening: every 5 minutes within 3 hours of the change, else every hour
        if (i % (Math.abs(t - change) <= 180 * MIN ? 5 : 60) !== 0) continue;
        const got = nextOpening([w], t)?.at;
        if (got !== nextRef[i] && wrong.length < 20)
          wrong.push(`${name} from ${iso(t)}: next ${iso(got)}, reference ${iso(nextRef[i])}`);
      }
      // the window opens on the day of the change itself, once at least (never lost)
      expect(ref.slice(0, (to - from) / MIN).some(Boolean), name).toBe(true);
    }
    expect(wrong.join('\n')).toBe('');
  });
});
