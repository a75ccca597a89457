// A failing soak tells how to see it again: the command that replays the shortest failing schedule
// found (the steps written to a file, then --steps), or the seed's whole schedule when none was shrunk.
import { describe, expect, it } from 'vitest';
import { replayCommand } from '../../bench/chaos/replay.ts';
import type { Step } from '../../bench/chaos/schedule.ts';

const steps: Step[] = [
  { kind: 'cordon', node: 'hv-2', drain: 'kured' },
  { kind: 'node-recreate', node: 'hv-2', at: 'stopped' },
];

describe('the replay command of a failing soak', () => {
  it('replays the shrunk schedule from a file it writes, with the same seed', () => {
    const cmd = replayCommand({ seed: 491248, rounds: 22, steps });
    expect(cmd).toBe(
      `printf '%s' '${JSON.stringify(steps)}' > chaos-steps-491248.json && npm run chaos -- --seed 491248 --steps chaos-steps-491248.json --no-write --shrink-seconds 0`,
    );
  });

  it('replays the whole schedule of the seed when nothing was shrunk', () => {
    expect(replayCommand({ seed: 7, rounds: 40 })).toBe(
      'npm run chaos -- --seed 7 --rounds 40 --no-write --shrink-seconds 0',
    );
  });

  it('keeps the kinds the soak was told to leave out', () => {
    expect(replayCommand({ seed: 7, rounds: 40, without: new Set(['api-drop', 'owner']) })).toBe(
      'npm run chaos -- --seed 7 --rounds 40 --without api-drop,owner --no-write --shrink-seconds 0',
    );
  });
});
