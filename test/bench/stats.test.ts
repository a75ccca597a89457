import { describe, expect, it } from 'vitest';
import { idealMakespan, percentile, seededDurations } from '../../bench/lib/stats.ts';
import { seededRandom } from '../../src/sandbox/openstack/ids.ts';

describe('bench statistics', () => {
  it('bounds a makespan by the spread work or the longest job, whichever is larger', () => {
    expect(idealMakespan([3, 3, 3, 3], 2)).toBe(6);
    expect(idealMakespan([10, 1, 1], 4)).toBe(10);
  });

  it('takes nearest-rank percentiles, so p99 of 50 samples is the largest', () => {
    const samples = Array.from({ length: 50 }, (_, i) => 50 - i);
    expect(percentile(samples, 50)).toBe(25);
    expect(percentile(samples, 99)).toBe(50);
    expect(percentile([], 50)).toBeNaN();
  });

  it('draws the same migration times for the same seed, within the range', () => {
    const a = seededDurations(seededRandom(42), 200, 1000, 4000);
    expect(seededDurations(seededRandom(42), 200, 1000, 4000)).toEqual(a);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...a)).toBeLessThanOrEqual(4000);
  });
});
