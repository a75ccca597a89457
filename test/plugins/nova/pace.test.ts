import { describe, expect, it } from 'vitest';
import { Pace, endedAt, type EndSeen } from '../../../src/plugins/nova/pace.ts';

describe('the poll pace', () => {
  it('starts at a second and doubles while it has seen no migration end', () => {
    const pace = new Pace(120_000);
    const next = () => pace.next({ inFlight: 3, now: 0 });
    expect([next(), next(), next(), next()]).toEqual([1000, 2000, 4000, 8000]);
  });

  // After one end it stops doubling: no second end since means the gap is at least the time since it.
  it.each([
    { case: 'just after the end: holds the last sleep', lastMs: 4000, inFlight: 4, since: 500, sleep: 4000 },
    {
      case: 'a while after: half the in-flight at that gap',
      lastMs: 4000,
      inFlight: 4,
      since: 3000,
      sleep: 6000,
    },
    { case: 'long after: up to pollInterval', lastMs: 4000, inFlight: 4, since: 90_000, sleep: 120_000 },
    { case: 'one in flight, soon: the last sleep', lastMs: 2000, inFlight: 1, since: 3000, sleep: 2000 },
  ])('with one end seen: $case', ({ lastMs, inFlight, since, sleep }) => {
    const pace = new Pace(120_000);
    let ms = 0;
    while (ms < lastMs) ms = pace.next({ inFlight, now: 0 });
    pace.ended(10_000);
    expect(pace.next({ inFlight, now: 10_000 + since })).toBe(sleep);
  });

  it('then looks again when about half the in-flight work can have ended, twice as often in the tail', () => {
    const pace = new Pace(120_000);
    for (const at of [0, 3000, 6000, 9000]) pace.ended(at);
    expect(pace.gapMs).toBe(3000);
    expect(pace.next({ inFlight: 4, now: 9000 })).toBe(6000); // 4 in flight, one ends every 3 s
    expect(pace.next({ inFlight: 2, now: 9000, tail: true })).toBe(1500);
  });

  it('in the tail may look as often as every half second, and nowhere else', () => {
    const pace = new Pace(120_000);
    for (const at of [0, 3000, 6000, 9000]) pace.ended(at);
    expect(pace.next({ inFlight: 1, now: 9000, tail: true })).toBe(750); // a quarter of one gap
    expect(pace.next({ inFlight: 1, now: 9000 })).toBe(1500);
    const quick = new Pace(120_000);
    for (const at of [0, 1000, 2000]) quick.ended(at);
    expect(quick.next({ inFlight: 1, now: 2000, tail: true })).toBe(500);
    expect(quick.next({ inFlight: 1, now: 2000 })).toBe(1000);
  });

  it('takes ends in the order they happened, whatever order the polls saw them in', () => {
    const pace = new Pace(120_000);
    for (const at of [6000, 0, 9000, 3000]) pace.ended(at);
    expect(pace.gapMs).toBe(3000);
    for (let i = 0; i < 20; i++) pace.ended(12_000 + i * 1000); // the four oldest fall out of the window
    expect(pace.gapMs).toBe(1000);
  });

  it('never waits past pollInterval or past something due on our side', () => {
    const pace = new Pace(5000);
    for (const at of [0, 60_000, 120_000]) pace.ended(at);
    expect(pace.next({ inFlight: 4, now: 120_000 })).toBe(5000);
    expect(pace.next({ inFlight: 4, now: 120_000, dueIn: 2500 })).toBe(2500);
  });
});

describe('when a migration ended', () => {
  const nova = Date.parse('2026-01-01T10:00:00Z');
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
  // Our clock runs 1 h behind Nova's; the polls were at 100 000 and 110 000 on ours.
  const base = { now: 110_000, since: 100_000, novaNow: nova + 3_600_000 };
  it.each<{ case: string; seen: Partial<EndSeen>; at: number }>([
    { case: "4 s before Nova's answer", seen: { updated: iso(nova + 3_596_000) }, at: 106_000 },
    { case: 'as the answer was made', seen: { updated: iso(nova + 3_600_000) }, at: 110_000 },
    {
      case: 'before the last poll (a later change): the last poll',
      seen: { updated: iso(nova) },
      at: 100_000,
    },
    {
      case: "after Nova's now (a skewed header): this poll",
      seen: { updated: iso(nova + 3_605_000) },
      at: 110_000,
    },
    { case: 'no updated: this poll', seen: { updated: undefined }, at: 110_000 },
    { case: 'an updated Nova wrote wrong: this poll', seen: { updated: 'yesterday' }, at: 110_000 },
    {
      case: "Nova's clock unknown: this poll",
      seen: { updated: iso(nova), novaNow: undefined },
      at: 110_000,
    },
    { case: 'no poll before: this poll', seen: { updated: iso(nova), since: undefined }, at: 110_000 },
  ])('$case', ({ seen, at }) => {
    expect(endedAt({ ...base, updated: undefined, ...seen })).toBe(at);
  });
});
