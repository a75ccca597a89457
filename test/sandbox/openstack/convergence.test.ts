// The sandbox's pre-copy model: a quiet guest moves in one pass, a guest that dirties memory as
// fast as the link copies never converges and what is left stops falling.
import { describe, expect, it } from 'vitest';
import { preCopy } from '../../../src/sandbox/openstack/nova/convergence.ts';

const MB = 1024 * 1024;
const total = 8192 * MB;
const link = (mbPerSecond: number) => (mbPerSecond * MB) / 1000; // bytes per ms

describe('pre-copy convergence model', () => {
  it('a quiet guest converges after one pass over its memory', () => {
    const c = preCopy({ totalBytes: total, bandwidth: link(1024), dirtyRate: 0 });
    expect(c.convergeMs).toBe(8000);
    expect(c.at(4000)).toEqual({ processed: 4096 * MB, remaining: 4096 * MB });
    expect(c.at(9000).remaining).toBe(0);
  });

  it('a guest dirtying a quarter of the link converges a little later', () => {
    const c = preCopy({ totalBytes: total, bandwidth: link(1024), dirtyRate: link(256) });
    expect(c.convergeMs).toBeGreaterThan(8000);
    expect(c.convergeMs).toBeLessThan(12_000);
  });

  it('a guest dirtying faster than the link never converges: what is left stops at its hot set', () => {
    const c = preCopy({ totalBytes: total, bandwidth: link(1024), dirtyRate: link(1500) });
    const samples = [10_000, 60_000, 600_000].map((t) => c.at(t));
    expect(c.convergeMs).toBeUndefined();
    const hot = Math.round(0.4 * total);
    expect(samples.map((s) => s.remaining)).toEqual([hot, hot, hot]);
    // it keeps copying all the while
    expect(samples[2]!.processed).toBeGreaterThan(samples[1]!.processed);
  });
});
