// The sandbox's stamps: real time in whole seconds on the object, the exact scenario moment kept
// beside it. A scenario at scale 20 whose clock started with the real one at T0.
import { describe, expect, it } from 'vitest';
import { Stamps, type StampClock } from '../../../src/sandbox/kube/stamps.ts';

const T0 = Date.parse('2026-11-26T12:00:00Z');
const SCALE = 20;

function scenario(): { clock: StampClock; advance(realMs: number): void } {
  let real = T0;
  return {
    clock: {
      now: () => T0 + (real - T0) * SCALE,
      wallOf: (sim) => T0 + (sim - T0) / SCALE,
      fromWall: (wall) => T0 + (wall - T0) * SCALE,
    },
    advance: (ms) => {
      real += ms;
    },
  };
}

describe('stamps: real time on the object, the scenario moment kept', () => {
  it('stamps the real second of a moment, and gives the moment back to the millisecond', () => {
    const s = scenario();
    s.advance(1_730); // 34.6 s into the scenario
    const stamps = new Stamps(s.clock);

    const iso = stamps.stamp('uid-1', 'metadata.creationTimestamp');

    expect(iso).toBe('2026-11-26T12:00:01Z');
    expect(stamps.momentOf('uid-1', 'metadata.creationTimestamp', Date.parse(iso))).toBe(T0 + 34_600);
    // from the stamp alone, the moment is only known to the real second: 20 scenario seconds
    expect(s.clock.fromWall(Date.parse(iso))).toBe(T0 + 20_000);
  });

  it('a moment ahead (a grace period) is stamped at its real moment', () => {
    const s = scenario();
    const stamps = new Stamps(s.clock);

    const iso = stamps.stamp('uid-1', 'metadata.deletionTimestamp', s.clock.now() + 30_000);

    expect(iso).toBe('2026-11-26T12:00:01Z'); // 30 scenario seconds are 1.5 real ones
    expect(stamps.momentOf('uid-1', 'metadata.deletionTimestamp', Date.parse(iso))).toBe(T0 + 30_000);
  });

  it('a stamp a client wrote, or one of an object gone, is read from its own time', () => {
    const s = scenario();
    const stamps = new Stamps(s.clock);
    stamps.stamp('uid-1', 'status.disruptedPods.web-1');
    s.advance(1_730);
    const created = Date.parse(stamps.stamp('uid-2', 'metadata.creationTimestamp'));
    stamps.forget('uid-2');
    const client = Date.parse('2026-11-26T12:00:05Z');

    expect(stamps.momentOf('uid-1', 'status.disruptedPods.web-1', client)).toBe(T0 + 100_000);
    expect(stamps.momentOf('uid-2', 'metadata.creationTimestamp', created)).toBe(T0 + 20_000);
    expect(stamps.momentOf('uid-3', 'metadata.creationTimestamp', NaN)).toBeNaN();
  });
});
