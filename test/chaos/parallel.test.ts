// Story: `npm run chaos -- --seed 5,6 --parallel` runs each seed's soak in its own process, side by
// side, and reports both runs as one invocation would have, each under its own seed.
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runSeedsInParallel } from '../../bench/chaos/parallel.ts';

const script = path.resolve(import.meta.dirname, '../../bench/chaos/run.ts');

describe('chaos --parallel', () => {
  it('runs each seed in a child process and brings back every run, its lines marked with its seed', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const runs = await runSeedsInParallel([5, 6], {
        script,
        common: ['--rounds', '1', '--shrink-seconds', '0'],
      });

      expect(runs.map((r) => [r.result.seed, r.result.ran.length])).toEqual([
        [5, 1],
        [6, 1],
      ]);
      const lines = out.mock.calls.map(([l]) => String(l));
      expect(lines.some((l) => l.startsWith('[seed 5] chaos: seed 5: 1 rounds'))).toBe(true);
      expect(lines.some((l) => l.startsWith('[seed 6] chaos: seed 6: 1 rounds'))).toBe(true);
    } finally {
      out.mockRestore();
    }
  }, 120_000);

  it('fails, naming the seed, when a child does not run to its end', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      // a bad flag: the child exits 2 before any round
      await expect(runSeedsInParallel([7], { script, common: ['--rounds', 'many'] })).rejects.toThrow(
        'the soak of seed 7 ended with exit 2',
      );
    } finally {
      out.mockRestore();
    }
  });
});
