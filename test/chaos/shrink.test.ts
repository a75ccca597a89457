// The shrinker: from a failing schedule, the shortest one it can find that still fails, within its
// time and tries.
import { describe, expect, it } from 'vitest';
import { shrink } from '../../bench/chaos/shrink.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const far = { deadline: Number.MAX_SAFE_INTEGER };

describe('schedule shrinker', () => {
  it('finds the single step that fails on its own', async () => {
    const r = await shrink(range(40), async (s) => s.includes(17), far);
    expect(r.steps).toEqual([17]);
    expect(r.complete).toBe(true);
  });

  it('keeps two steps that fail only together, in their order', async () => {
    const fails = async (s: number[]) => s.indexOf(5) >= 0 && s.indexOf(5) < s.indexOf(31);
    const r = await shrink(range(50), fails, far);
    expect(r.steps).toEqual([5, 31]);
  });

  it('needs far fewer tries than dropping one step at a time from every subset', async () => {
    const r = await shrink(range(200), async (s) => s.includes(150), far);
    expect(r.steps).toEqual([150]);
    expect(r.tries).toBeLessThan(60);
  });

  it('stops at its deadline with a schedule that still fails', async () => {
    let t = 0;
    const fails = async (s: number[]) => s.includes(3) && s.includes(90);
    const r = await shrink(range(100), fails, { deadline: 5, now: () => t++ });
    expect(r.complete).toBe(false);
    expect(r.tries).toBe(5);
    expect(await fails(r.steps)).toBe(true);
  });

  it('stops after its most tries', async () => {
    const r = await shrink(range(64), async (s) => s.includes(9), { ...far, maxTries: 3 });
    expect(r.tries).toBe(3);
    expect(r.steps).toContain(9);
    expect(r.complete).toBe(false);
  });
});
