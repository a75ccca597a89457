// Stall detection as tables of counter samples: a migration is stalled when the least memory it
// still had to copy has not improved for nova.stallAfter.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.ts';
import { endedMeanwhile } from '../../../src/plugins/nova/watch.ts';
import {
  isStalled,
  observe,
  sampleOf,
  stallAction,
  type CopySample,
  type StallClock,
} from '../../../src/plugins/nova/stall.ts';

const GIB = 1024 ** 3;
const STALL_MS = 60_000;

/**
 * Folds samples [ms, processed GiB, remaining GiB] of an 8 GiB guest that got its slot at its
 * submit (0); says when each looked stalled.
 */
function run(
  samples: [at: number, processed: number, remaining: number][],
  started = { earliest: 0, latest: 0 },
) {
  let clock: StallClock | undefined;
  return samples.map(([at, processed, remaining]) => {
    const s: CopySample = { at, total: 8 * GIB, processed: processed * GIB, remaining: remaining * GIB };
    clock = observe(clock, 7, s, started);
    return isStalled(clock, at, STALL_MS);
  });
}

describe('stall detection', () => {
  it.each([
    {
      story: 'a busy guest: what is left stops at 3.2 GiB after the first pass',
      samples: [
        [20_000, 10, 3.2],
        [70_000, 35, 3.2],
        [80_000, 40, 3.2],
      ],
      // first pass ended at 20 s × 8/10 = 16 s: stalled from 76 s on
      stalled: [false, false, true],
    },
    {
      story: 'a converging guest: what is left keeps falling',
      samples: [
        [20_000, 6, 2],
        [80_000, 9, 1],
        [140_000, 10, 0.5],
      ],
      stalled: [false, false, false],
    },
    {
      story: 'falls once, then stays: the clock restarts at the fall',
      samples: [
        [20_000, 10, 3.2],
        [60_000, 30, 2.0],
        [110_000, 55, 2.0],
        [121_000, 60, 2.0],
      ],
      stalled: [false, false, false, true],
    },
    {
      story: 'wobbles below 1 % of the memory are noise, not progress',
      samples: [
        [20_000, 10, 3.2],
        [50_000, 25, 3.19],
        [77_000, 38, 3.18],
      ],
      stalled: [false, false, true],
    },
    {
      story: 'still in its first pass: the clock starts at the sample',
      samples: [
        [20_000, 4, 4],
        [70_000, 9, 3.5],
        [131_000, 40, 3.5],
      ],
      stalled: [false, false, true],
    },
  ] as const)('$story', ({ samples, stalled }) => {
    expect(run(samples.map((s) => [...s]))).toEqual(stalled);
  });

  it('queued behind others, its slot time unknown: a second sample measures the rate and dates the first pass', () => {
    // submitted at 0, seen holding a slot at 100 s, truly running from 40 s at 0.5 GiB/s: first pass ends at 56 s
    const started = { earliest: 0, latest: 100_000 };
    const at = (t: number): CopySample => ({
      at: t,
      total: 8 * GIB,
      processed: ((t - 40_000) / 2000) * GIB,
      remaining: 3.2 * GIB,
    });
    const first = observe(undefined, 7, at(120_000), started);
    const second = observe(first, 7, at(130_000), started);
    // from the latest start alone: 100 s + 20 s × 8/40 = 104 s (late, never early)
    expect(first.since).toBe(104_000);
    expect(first.first).toBeDefined();
    expect(second.since).toBeCloseTo(56_000, -1);
    expect(second.first).toBeUndefined();
    // with the host's rate known, one sample is enough
    expect(observe(undefined, 7, at(120_000), started, (0.5 * GIB) / 1000).since).toBeCloseTo(56_000, -1);
  });

  it('a new migration id (a retry) starts a new clock', () => {
    const s = (at: number): CopySample => ({ at, total: 8 * GIB, processed: 20 * GIB, remaining: 3 * GIB });
    const old = observe(undefined, 7, s(10_000), { earliest: 0, latest: 0 });
    const next = observe(old, 8, s(200_000), { earliest: 190_000, latest: 190_000 });
    expect(isStalled(old, 200_000, STALL_MS)).toBe(true);
    expect(next.migrationId).toBe(8);
    expect(isStalled(next, 200_000, STALL_MS)).toBe(false);
  });

  it('reads the counters only when libvirt has reported them', () => {
    const m = { id: 3, status: 'running' };
    expect(sampleOf({ ...m, memory_total_bytes: null, memory_remaining_bytes: null }, 1)).toBeUndefined();
    expect(
      sampleOf(
        {
          ...m,
          memory_total_bytes: 8 * GIB,
          memory_processed_bytes: 5 * GIB,
          memory_remaining_bytes: 3 * GIB,
        },
        1,
      ),
    ).toEqual({ at: 1, total: 8 * GIB, processed: 5 * GIB, remaining: 3 * GIB });
  });

  it.each([
    { onStall: 'force-complete', minor: 22, want: { action: 'force-complete' } },
    {
      onStall: 'force-complete',
      minor: 21,
      want: { action: 'wait', fallback: 'force-complete needs compute microversion 2.22' },
    },
    { onStall: 'abort', minor: 24, want: { action: 'abort' } },
    {
      onStall: 'abort',
      minor: 23,
      want: { action: 'wait', fallback: 'abort needs compute microversion 2.24' },
    },
    { onStall: 'wait', minor: 1, want: { action: 'wait' } },
  ] as const)('onStall $onStall at 2.$minor: $want.action', ({ onStall, minor, want }) => {
    expect(stallAction({ onStall }, (v) => minor >= v)).toEqual(want);
  });
});

describe('a force-complete that comes too late (the owner deleted the server, or it ended meanwhile)', () => {
  const answer = (status: number) =>
    new ApiError('API', `nova POST /servers/s/migrations/1/action → ${status}`, { api: 'nova', status });

  it("takes Nova's 400 and 409 for a migration no longer running: a race, not a failure", () => {
    // chaos seed 2 round 135: the owner deleted the server as the stalled migration was forced
    expect(endedMeanwhile(answer(400))).toBe(true);
    expect(endedMeanwhile(answer(409))).toBe(true);
  });

  it('keeps every other answer a warning', () => {
    expect(endedMeanwhile(answer(500))).toBe(false);
    expect(endedMeanwhile(answer(403))).toBe(false);
    expect(endedMeanwhile(new Error('socket hang up'))).toBe(false);
  });
});
