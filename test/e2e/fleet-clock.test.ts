// Story: the agents' clocks disagree. r2's machine runs 30 s ahead. With one slot taken, r2 is
// cordoned, then r3 a moment later: r2 was first in, and goes first, because the queue is ordered
// by the API server's clock (the Date of its answers), not by what each agent's clock says
// (issue 48 item 5). By its own clock r2 queued 30 s after r3 and would have gone last.
import { afterEach, describe, expect, it } from 'vitest';
import { rack } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';
import { maxEvacuating, phaseTimeline } from './phase-timeline.ts';

const queuedLabel = async (s: Stack, node: string) =>
  Number((await s.node(node)).metadata.labels?.['drainer.dev/queued']);

describe('fleet queue: one clock for every agent', () => {
  let stack: Stack | undefined;
  const stop = new AbortController();
  afterEach(async () => {
    stop.abort();
    await stack?.close();
    stack = undefined;
  });

  it("first in, first out by the API server's time, whatever the agents' clocks say", async () => {
    stack = await startStack({
      scenario: rack(3, 2, 20),
      config: { fleet: { maxConcurrentEvacuations: 1, leaseDuration: 1 } },
    });
    const s = stack;
    const ahead = () => new Date(Date.now() + 30_000);
    const agents = [s.startAgent('r1'), s.startAgent('r2', {}, { now: ahead }), s.startAgent('r3')];
    await until('agents ready', () => agents.every((a) => a.agent.ready().ready));
    const timeline = phaseTimeline(s, stop.signal);

    await s.cordon('r1');
    await until('r1 holds the slot', async () => (await s.record('r1'))?.phase === 'Evacuating');
    await s.cordon('r2');
    await until('r2 queued', async () => (await s.record('r2'))?.phase === 'Queued');
    await s.cordon('r3');
    await until('r3 queued', async () => (await s.record('r3'))?.phase === 'Queued');

    // by its own clock r2 queued 30 s after r3; its record keeps that, the queue does not go by it
    const [r2, r3] = [await s.record('r2'), await s.record('r3')];
    expect(Date.parse(r2?.queuedAt ?? '')).toBeGreaterThan(Date.parse(r3?.queuedAt ?? ''));
    expect(await queuedLabel(s, 'r2')).toBeLessThan(await queuedLabel(s, 'r3'));
    // the API server's time, as the agents' transports keep it: within a second of the real one
    expect(Math.abs((await queuedLabel(s, 'r2')) - Date.now())).toBeLessThan(5_000);

    await until(
      'all evacuated',
      async () =>
        (await Promise.all(['r1', 'r2', 'r3'].map((n) => s.record(n)))).every(
          (r) => r?.phase === 'Evacuated',
        ),
      60_000,
    );
    expect(timeline.filter((t) => t.phase === 'Evacuating').map((t) => t.node)).toEqual(['r1', 'r2', 'r3']);
    expect(maxEvacuating(timeline)).toBe(1);
  }, 90_000);
});
