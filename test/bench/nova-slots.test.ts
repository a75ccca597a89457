import { describe, expect, it } from 'vitest';
import { slotFigures } from '../../bench/lib/nova-slots.ts';

describe("Nova's own limit from its migration records", () => {
  it('counts a migration submitted ahead only from when the slot before it freed', () => {
    // one slot: the second was created at 1 s and waited in Nova's queue until the first ended at 6 s
    const f = slotFigures(
      [
        { created: 0, start: 500, end: 6000 },
        { created: 1000, start: 6100, end: 11_000 },
      ],
      1,
    );
    expect(f.limitMs).toBe(6000 + 5000);
    expect(f.gapsMs).toEqual([0]);
    expect(f.handoffMs).toEqual([100]);
  });

  it("charges the evacuator the time from a slot's end to the next record, not Nova", () => {
    const f = slotFigures(
      [
        { created: 0, start: 500, end: 6000 },
        { created: 6800, start: 7300, end: 12_000 },
      ],
      1,
    );
    expect(f.limitMs).toBe(6000 + 5200);
    expect(f.gapsMs).toEqual([800]);
  });

  it('gives each start the slot freed most recently before it (M = 2)', () => {
    const f = slotFigures(
      [
        { created: 0, start: 100, end: 5000 },
        { created: 0, start: 100, end: 7000 },
        { created: 0, start: 5050, end: 10_000 },
        { created: 7200, start: 7400, end: 12_000 },
      ],
      2,
    );
    expect(f.gapsMs).toEqual([0, 200]);
    expect(f.handoffMs).toEqual([50, 400]);
    expect(f.limitMs).toBe((5000 + 7000 + 5000 + 4800) / 2);
  });

  it('is never below the longest migration', () => {
    expect(slotFigures([{ created: 0, start: 0, end: 9000 }], 2).limitMs).toBe(9000);
  });
});
