import { describe, expect, it } from 'vitest';
import { Pace } from '../../../src/plugins/nova/pace.ts';

describe('the poll pace', () => {
  it('starts at a second and doubles while it has not seen two migrations end', () => {
    const pace = new Pace(120_000);
    expect([pace.next(3), pace.next(3), pace.next(3), pace.next(3)]).toEqual([1000, 2000, 4000, 8000]);
    pace.ended(10_000);
    expect(pace.next(3)).toBe(16_000);
  });

  it('then looks again when about half the in-flight work can have ended, twice as often in the tail', () => {
    const pace = new Pace(120_000);
    for (const at of [0, 3000, 6000, 9000]) pace.ended(at);
    expect(pace.gapMs).toBe(3000);
    expect(pace.next(4)).toBe(6000); // 4 in flight, one ends every 3 s
    expect(pace.next(2, undefined, true)).toBe(1500);
  });

  it('never waits past pollInterval or past something due on our side', () => {
    const pace = new Pace(5000);
    for (const at of [0, 60_000, 120_000]) pace.ended(at);
    expect(pace.next(4)).toBe(5000);
    expect(pace.next(4, 2500)).toBe(2500);
  });
});
