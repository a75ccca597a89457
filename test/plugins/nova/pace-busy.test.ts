import { describe, expect, it } from 'vitest';
import { Pace, mergeWithDecision } from '../../../src/plugins/nova/pace.ts';
import { WorkClock } from '../../../src/plugins/nova/work-clock.ts';

describe("the host's working time", () => {
  // Two slots: both working from 0, one parked by a busy guest from 10 s, both again from 30 s.
  const clock = () => {
    const c = new WorkClock();
    c.set(0, 2, 2);
    c.set(10_000, 1, 2);
    c.set(30_000, 2, 2);
    return c;
  };
  it.each([
    { case: 'all slots working: our time', at: 5000, work: 5000 },
    { case: 'one of two parked: half as fast', at: 20_000, work: 15_000 },
    { case: 'at the change back', at: 30_000, work: 20_000 },
    { case: 'working again', at: 40_000, work: 30_000 },
    { case: 'before anything was set: our time', at: -1000, work: -1000 },
  ])('$case', ({ at, work }) => {
    expect(clock().workAt(at)).toBe(work);
  });

  it.each([
    { case: 'none parked', working: 2, of: 2, rate: 1 },
    { case: 'one of two parked', working: 1, of: 2, rate: 0.5 },
    { case: 'every slot parked', working: 0, of: 2, rate: 0 },
    { case: 'more working than slots (a miscount): capped', working: 3, of: 2, rate: 1 },
  ])('the share working: $case', ({ working, of, rate }) => {
    const c = new WorkClock();
    c.set(0, working, of);
    expect(c.rate).toBe(rate);
  });

  it('a second setting at the same moment replaces the first', () => {
    const c = new WorkClock();
    c.set(0, 2, 2);
    c.set(10_000, 2, 2);
    c.set(10_000, 0, 2);
    expect(c.workAt(20_000)).toBe(10_000);
  });
});

describe('the poll pace on working time', () => {
  // Ends every 3 s with both slots working, then a busy guest parks one slot from 9 s.
  const paced = () => {
    const pace = new Pace(120_000);
    pace.next({ inFlight: 4, now: 0, working: { slots: 2, of: 2 } });
    for (const at of [0, 3000, 6000, 9000]) pace.ended(at);
    return pace;
  };
  it.each([
    { case: 'both slots working: half the in-flight at the gap', working: 2, sleep: 6000 },
    { case: 'one slot parked: ends come half as often', working: 1, sleep: 12_000 },
    { case: 'every slot parked: only what is due', working: 0, sleep: 120_000 },
  ])('$case', ({ working, sleep }) => {
    expect(paced().next({ inFlight: 4, now: 9000, working: { slots: working, of: 2 } })).toBe(sleep);
  });

  it('every slot parked still looks when something is due (a forced end)', () => {
    expect(paced().next({ inFlight: 4, now: 9000, dueIn: 3500, working: { slots: 0, of: 2 } })).toBe(3500);
  });

  it('a parked stretch does not stretch the gap it learns', () => {
    const pace = paced();
    pace.next({ inFlight: 4, now: 9000, working: { slots: 0, of: 2 } });
    // both slots parked for 60 s, then working: the next end 3 s of work later is one gap on
    pace.next({ inFlight: 4, now: 69_000, working: { slots: 2, of: 2 } });
    pace.ended(72_000);
    expect(pace.gapMs).toBe(3000);
    const naive = new Pace(120_000);
    for (const at of [0, 3000, 6000, 9000, 72_000]) naive.ended(at);
    expect(naive.gapMs).toBe(18_000);
  });
});

describe('a poll waits for a stall decision due a little after it', () => {
  // The pace planned a poll 40 s from now (at 100 s); a parked slot's stall decision is due at `decision`.
  it.each([
    { case: 'due within half the sleep after the poll: waits', decision: 115_000, merged: true },
    { case: 'due exactly half the sleep after: waits', decision: 120_000, merged: true },
    { case: 'due later than that: polls as planned', decision: 121_000, merged: false },
    { case: 'due before the poll: read on its own, poll as planned', decision: 90_000, merged: false },
    { case: 'due with the poll: poll as planned', decision: 100_000, merged: false },
  ])('$case', ({ decision, merged }) => {
    expect(mergeWithDecision(60_000, 100_000, decision)).toBe(merged);
  });
});
