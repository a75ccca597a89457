import { describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/sandbox/clock.ts';

describe('ScaledClock', () => {
  it('passes simulated time faster than real time by its scale', async () => {
    const clock = new ScaledClock(50);
    const realStart = Date.now();
    const simStart = clock.now();
    await clock.sleep(2000); // 2 s simulated = 40 ms real
    const real = Date.now() - realStart;
    expect(real).toBeLessThan(1000);
    expect(clock.now() - simStart).toBeGreaterThanOrEqual(1900);
  });

  it('rejects a sleep when its signal aborts', async () => {
    const clock = new ScaledClock(1);
    const ac = new AbortController();
    const p = clock.sleep(60_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });

  it('refuses a scale that is not positive', () => {
    expect(() => new ScaledClock(0)).toThrow(/scale/);
  });
});
