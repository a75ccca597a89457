// `kubectl drain` on a real cluster waits for the VMs: the drain gate's PDB answers 429 until the last
// server has left the compute host, and the drain returns only after that (the margin is measured).
import { describe, expect, it } from 'vitest';
import { figure, seconds, useReal } from './support/context.ts';
import { Departures } from './support/nova.ts';

const real = useReal();

describe('kubectl drain', () => {
  it('is held until the last server has left the host', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('drain', 3);

    const drain = r.cluster.drain();
    const departures = new Departures(r.nova, servers);
    const done = await drain.done;
    const leftAtReturn = await r.nova.stillOnHost(servers);
    await departures.end();

    expect(done.code, done.stderr).toBe(0);
    expect(
      leftAtReturn.map((s) => s.name),
      'servers still on the host when kubectl drain returned',
    ).toEqual([]);
    expect(departures.lastLeftAt).toBeDefined();
    expect(done.endedAt).toBeGreaterThanOrEqual(departures.lastLeftAt!);
    expect(await r.cluster.phase()).toBe('Evacuated');
    figure(ctx, 'drain took', `${seconds(done.endedAt - drain.startedAt)} s`);
    figure(
      ctx,
      'drain returned after the last server left by',
      `${seconds(done.endedAt - departures.lastLeftAt!)} s`,
    );

    await r.cluster.backInService();
  });
});
