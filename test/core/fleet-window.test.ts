// Window arithmetic from tables: wall-clock windows in IANA zones, across midnight and both DST
// changes, freezes overlapping windows, and the next opening with its text.
import { describe, expect, it } from 'vitest';
import { calendarVerdict, nextStart, type CalendarConfig } from '../../src/core/fleet/calendar.ts';
import { inText, nextOpening, windowOpen, type MaintenanceWindow } from '../../src/core/fleet/window.ts';
import { configSchema } from '../../src/config/schema.ts';

const t = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

const weekendBerlin: MaintenanceWindow = {
  days: ['sat', 'sun'],
  start: '02:00',
  end: '06:00',
  timeZone: 'Europe/Berlin',
};
const nightsNY: MaintenanceWindow = {
  days: ['fri'],
  start: '22:00',
  end: '03:00',
  timeZone: 'America/New_York',
};
const utcMorning: MaintenanceWindow = {
  days: ['mon', 'tue', 'wed', 'thu', 'fri'],
  start: '09:00',
  end: '10:30',
  timeZone: 'UTC',
};
const sunEarlyBerlin: MaintenanceWindow = {
  days: ['sun'],
  start: '02:30',
  end: '04:00',
  timeZone: 'Europe/Berlin',
};
const sunOneBerlin: MaintenanceWindow = {
  days: ['sun'],
  start: '01:00',
  end: '02:30',
  timeZone: 'Europe/Berlin',
};

/** Wholly inside Berlin's spring-forward gap on 29 Mar 2026: opens at the change, for its hour. */
const gapHourBerlin: MaintenanceWindow = {
  days: ['sun'],
  start: '02:00',
  end: '03:00',
  timeZone: 'Europe/Berlin',
};

describe('windowOpen', () => {
  it.each([
    // [window, instant, open]
    [weekendBerlin, '2026-11-28T00:59:00Z', false], // Sat 01:59 CET
    [weekendBerlin, '2026-11-28T01:00:00Z', true], // Sat 02:00 CET
    [weekendBerlin, '2026-11-28T04:59:00Z', true], // Sat 05:59 CET
    [weekendBerlin, '2026-11-28T05:00:00Z', false], // Sat 06:00 CET: the end is exclusive
    [weekendBerlin, '2026-07-04T00:30:00Z', true], // Sat 02:30 CEST (summer: UTC+2)
    [weekendBerlin, '2026-07-04T04:30:00Z', false], // Sat 06:30 CEST
    [weekendBerlin, '2026-11-30T01:30:00Z', false], // Mon 02:30
    // crossing midnight: Fri 22:00 → Sat 03:00 New York
    [nightsNY, '2026-11-28T02:59:00Z', false], // Fri 21:59 EST
    [nightsNY, '2026-11-28T03:00:00Z', true], // Fri 22:00 EST
    [nightsNY, '2026-11-28T07:59:00Z', true], // Sat 02:59 EST: the morning after a listed day
    [nightsNY, '2026-11-28T08:00:00Z', false], // Sat 03:00 EST
    [nightsNY, '2026-11-27T06:00:00Z', false], // Fri 01:00 EST: Thursday is not listed
    [utcMorning, '2026-11-27T10:29:00Z', true],
    [utcMorning, '2026-11-28T09:30:00Z', false], // Saturday
    // spring forward (Berlin, 29 Mar 2026, 02:00 CET → 03:00 CEST): 02:30 does not exist
    [sunEarlyBerlin, '2026-03-29T00:59:00Z', false], // 01:59 CET
    [sunEarlyBerlin, '2026-03-29T01:00:00Z', true], // 03:00 CEST, past the start that never came
    [sunEarlyBerlin, '2026-03-29T01:59:00Z', true], // 03:59 CEST
    [sunEarlyBerlin, '2026-03-29T02:00:00Z', false], // 04:00 CEST
    [gapHourBerlin, '2026-03-29T00:59:00Z', false], // 01:59 CET
    [gapHourBerlin, '2026-03-29T01:00:00Z', true], // 03:00 CEST: the hour that never came, from the change
    [gapHourBerlin, '2026-03-29T01:59:00Z', true], // 03:59 CEST
    [gapHourBerlin, '2026-03-29T02:00:00Z', false], // 04:00 CEST: its usual length is over
    [gapHourBerlin, '2026-04-05T00:30:00Z', true], // a week later: 02:30 CEST, the wall clock again
    // fall back (Berlin, 25 Oct 2026, 03:00 CEST → 02:00 CET): 02:00-02:59 happens twice
    [sunOneBerlin, '2026-10-24T23:00:00Z', true], // 01:00 CEST
    [sunOneBerlin, '2026-10-25T00:29:00Z', true], // 02:29 CEST
    [sunOneBerlin, '2026-10-25T00:30:00Z', false], // 02:30 CEST
    [sunOneBerlin, '2026-10-25T01:10:00Z', true], // 02:10 CET: the hour again
    [sunOneBerlin, '2026-10-25T01:30:00Z', false], // 02:30 CET
  ] as const)('%o at %s: open %s', (w, at, open) => {
    expect(windowOpen(w, t(at))).toBe(open);
  });
});

describe('nextOpening', () => {
  it.each([
    // [windows, from, next opening]
    [[weekendBerlin], '2026-11-27T15:48:00Z', '2026-11-28T01:00:00.000Z'],
    [[weekendBerlin], '2026-11-28T05:00:00Z', '2026-11-29T01:00:00.000Z'], // Sat closed → Sun 02:00
    [[weekendBerlin], '2026-11-29T05:00:00Z', '2026-12-05T01:00:00.000Z'], // Sun closed → next Sat
    [[weekendBerlin], '2026-07-03T12:00:00Z', '2026-07-04T00:00:00.000Z'], // summer: 02:00 CEST is 00:00Z
    [[nightsNY], '2026-11-25T12:00:00Z', '2026-11-28T03:00:00.000Z'],
    // the start falls in the spring-forward gap: it opens at the transition
    [[sunEarlyBerlin], '2026-03-28T12:00:00Z', '2026-03-29T01:00:00.000Z'],
    // wholly inside the gap: opens at the change, not a week later
    [[gapHourBerlin], '2026-03-28T12:00:00Z', '2026-03-29T01:00:00.000Z'],
    // fall back: 01:00 CEST on 25 Oct is 23:00Z the day before
    [[sunOneBerlin], '2026-10-24T12:00:00Z', '2026-10-24T23:00:00.000Z'],
    // New York springs forward on 8 Mar 2026: Friday 22:00 EDT after it
    [[nightsNY], '2026-03-09T00:00:00Z', '2026-03-14T02:00:00.000Z'],
    // of two windows, the earlier
    [[weekendBerlin, utcMorning], '2026-11-27T10:30:00Z', '2026-11-28T01:00:00.000Z'],
    [[weekendBerlin, utcMorning], '2026-11-29T05:00:00Z', '2026-11-30T09:00:00.000Z'],
    // already open: now
    [[utcMorning], '2026-11-27T09:15:00Z', '2026-11-27T09:15:00.000Z'],
  ] as const)('%#: from %s', (ws, from, expected) => {
    expect(iso(nextOpening(ws, t(from))?.at)).toBe(expected);
  });

  it('no windows: always open; a window with no days never opens', () => {
    expect(nextOpening([], 5)?.at).toBe(5);
    expect(nextOpening([{ ...utcMorning, days: [] }], 5)).toBeUndefined();
  });
});

const cal = (c: Partial<CalendarConfig>): CalendarConfig => ({
  maintenanceWindows: [],
  freezes: [],
  windowEnd: 'finish-running',
  ...c,
});

describe('freezes and the next start', () => {
  const xmas = { from: '2026-12-24T00:00:00Z', to: '2026-12-27T00:00:00Z', reason: 'christmas freeze' };
  const newYear = { from: '2026-12-26T12:00:00Z', to: '2027-01-02T00:00:00Z', reason: 'new year freeze' };
  it.each([
    // [calendar, now, next start]
    [cal({ freezes: [xmas] }), '2026-12-25T10:00:00Z', '2026-12-27T00:00:00.000Z'],
    [cal({ freezes: [xmas] }), '2026-12-23T10:00:00Z', '2026-12-23T10:00:00.000Z'],
    // overlapping freezes chain
    [cal({ freezes: [xmas, newYear] }), '2026-12-25T10:00:00Z', '2027-01-02T00:00:00.000Z'],
    // a freeze ends inside a window: at the freeze's end (Sat 26 Dec 02:00-06:00 Berlin covers 03:00Z)
    [
      cal({ maintenanceWindows: [weekendBerlin], freezes: [{ ...xmas, to: '2026-12-26T03:00:00Z' }] }),
      '2026-12-25T10:00:00Z',
      '2026-12-26T03:00:00.000Z',
    ],
    // a freeze ends between windows: the next window (Sun 27 Dec 02:00 Berlin)
    [
      cal({ maintenanceWindows: [weekendBerlin], freezes: [xmas] }),
      '2026-12-25T10:00:00Z',
      '2026-12-27T01:00:00.000Z',
    ],
    // with the overlapping new-year freeze: the first window after both (Sat 2 Jan)
    [
      cal({ maintenanceWindows: [weekendBerlin], freezes: [xmas, newYear] }),
      '2026-12-25T10:00:00Z',
      '2027-01-02T01:00:00.000Z',
    ],
    // a freeze covering the whole next window: the one after
    [
      cal({
        maintenanceWindows: [weekendBerlin],
        freezes: [{ from: '2026-11-28T00:00:00Z', to: '2026-11-29T12:00:00Z', reason: 'x' }],
      }),
      '2026-11-27T10:00:00Z',
      '2026-12-05T01:00:00.000Z',
    ],
  ] as const)('%#: from %s', (c, now, expected) => {
    expect(iso(nextStart(c, t(now)))).toBe(expected);
  });

  it('says why and until when', () => {
    const w = cal({ maintenanceWindows: [weekendBerlin] });
    expect(calendarVerdict(w, t('2026-11-27T15:48:00Z'))).toEqual({
      open: false,
      kind: 'window',
      reason: 'outside the maintenance window; opens Sat 02:00 Europe/Berlin (in 9 h 12 min)',
      until: t('2026-11-28T01:00:00Z'),
    });
    const f = calendarVerdict(
      cal({ maintenanceWindows: [weekendBerlin], freezes: [xmas] }),
      t('2026-12-25T10:00:00Z'),
    );
    expect(f).toMatchObject({ open: false, kind: 'freeze' });
    expect(!f.open && f.reason).toBe(
      'frozen (christmas freeze) until 2026-12-27T00:00:00Z; opens Sun 02:00 Europe/Berlin (in 1 d 15 h)',
    );
    expect(calendarVerdict(cal({}), t('2026-12-25T10:00:00Z'))).toEqual({ open: true });
  });

  it('windowEnd start-queued: a node queued inside the window still starts after it closed; finish-running: waits', () => {
    const closed = t('2026-11-28T06:00:00Z');
    const queuedInside = t('2026-11-28T04:00:00Z');
    const base = { maintenanceWindows: [weekendBerlin] };
    expect(calendarVerdict(cal({ ...base, windowEnd: 'start-queued' }), closed, queuedInside).open).toBe(
      true,
    );
    expect(
      calendarVerdict(cal({ ...base, windowEnd: 'start-queued' }), closed, t('2026-11-28T05:30:00Z')).open,
    ).toBe(false);
    expect(calendarVerdict(cal({ ...base, windowEnd: 'finish-running' }), closed, queuedInside).open).toBe(
      false,
    );
    // never inside a freeze
    const frozen = cal({
      ...base,
      windowEnd: 'start-queued',
      freezes: [{ from: '2026-11-28T05:30:00Z', to: '2026-11-29T00:00:00Z', reason: 'r' }],
    });
    expect(calendarVerdict(frozen, closed, queuedInside).open).toBe(false);
  });

  it.each([
    [60_000, '1 min'],
    [61_000, '2 min'],
    [3_600_000, '1 h'],
    [33_120_000, '9 h 12 min'],
    [2 * 86_400_000 + 3_600_000 * 4, '2 d 4 h'],
  ])('inText(%d) = %s', (ms, text) => expect(inText(ms)).toBe(text));
});

describe('config: bad windows, freezes and blockers are named', () => {
  it.each([
    [
      { maintenanceWindows: [{ days: ['saturday'], start: '02:00', end: '06:00' }] },
      'fleet.maintenanceWindows.0.days.0',
      /three-letter day/,
    ],
    [
      { maintenanceWindows: [{ days: ['sat'], start: '2:00', end: '06:00' }] },
      'fleet.maintenanceWindows.0.start',
      /HH:MM/,
    ],
    [
      { maintenanceWindows: [{ days: ['sat'], start: '02:00', end: '25:00' }] },
      'fleet.maintenanceWindows.0.end',
      /HH:MM/,
    ],
    [
      { maintenanceWindows: [{ days: ['sat'], start: '02:00', end: '06:00', timeZone: 'Europe/Berln' }] },
      'fleet.maintenanceWindows.0.timeZone',
      /IANA time zone/,
    ],
    [
      { maintenanceWindows: [{ days: [], start: '02:00', end: '06:00' }] },
      'fleet.maintenanceWindows.0.days',
      /at least one day/,
    ],
    [
      { freezes: [{ from: 'tomorrow', to: '2026-12-27T00:00:00Z', reason: 'x' }] },
      'fleet.freezes.0.from',
      /date and time/,
    ],
    [
      { freezes: [{ from: '2026-12-27T00:00:00Z', to: '2026-12-24T00:00:00Z', reason: 'x' }] },
      'fleet.freezes.0.to',
      /after "from"/,
    ],
    [{ windowEnd: 'stop' }, 'fleet.windowEnd', /finish-running/],
    [{ blockers: { prometheus: { url: 'not a url' } } }, 'fleet.blockers.prometheus.url', /URL/i],
    [
      { blockers: { prometheus: { url: 'http://p:9090', alertName: '(' } } },
      'fleet.blockers.prometheus.alertName',
      /regular expression/,
    ],
  ])('%j → %s', (fleet, path, message) => {
    const r = configSchema.safeParse({ fleet });
    expect(r.success).toBe(false);
    const issue = r.error?.issues.find((i) => i.path.join('.') === path);
    expect(issue?.message).toMatch(message);
  });

  it('defaults: UTC, no windows (always open), finish-running, interval 60 s', () => {
    const f = configSchema.parse({
      fleet: { maintenanceWindows: [{ days: ['sat'], start: '02:00', end: '06:00' }] },
    }).fleet;
    expect(f.maintenanceWindows[0]?.timeZone).toBe('UTC');
    expect(f.windowEnd).toBe('finish-running');
    expect(f.blockers.interval).toBe(60);
    expect(configSchema.parse({}).fleet.maintenanceWindows).toEqual([]);
  });
});

describe('windows and freezes from the environment (JSON lists)', () => {
  it('DRAINER_FLEET_MAINTENANCE_WINDOWS parses; a value that is no list is named', async () => {
    const { readDrainerEnv } = await import('../../src/config/env.ts');
    const ok = readDrainerEnv({
      DRAINER_FLEET_MAINTENANCE_WINDOWS: '[{"days":["sat"],"start":"02:00","end":"06:00"}]',
    });
    expect(ok.issues).toEqual([]);
    expect(configSchema.parse(ok.layer).fleet.maintenanceWindows).toEqual([
      { days: ['sat'], start: '02:00', end: '06:00', timeZone: 'UTC' },
    ]);
    const bad = readDrainerEnv({ DRAINER_FLEET_FREEZES: '{"from":"x"}' });
    expect(JSON.stringify(bad.issues)).toMatch(/DRAINER_FLEET_FREEZES|fleet\.freezes/);
    expect(JSON.stringify(bad.issues)).toMatch(/expected a JSON list/);
  });
});
