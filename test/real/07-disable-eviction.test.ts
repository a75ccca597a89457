// `kubectl drain --disable-eviction` deletes pods instead of evicting them, so no PDB holds it; it then waits
// until each pod is gone. The gate must still keep it until the VMs left. Needs the gate-healing issue (27).
import { describe, expect, it } from 'vitest';
import { figure, seconds, useReal } from './support/context.ts';
import { Departures } from './support/nova.ts';

const real = useReal();

describe('kubectl drain --disable-eviction', () => {
  it('returns only after the last server left the host', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('no-eviction', 3);

    const drain = r.cluster.drain('--disable-eviction');
    const departures = new Departures(r.nova, servers);
    const done = await drain.done;
    const leftAtReturn = await r.nova.stillOnHost(servers);
    await departures.end();
    figure(ctx, 'servers on the host when the drain returned', `${leftAtReturn.length} of ${servers.length}`);
    figure(ctx, 'drain took', `${seconds(done.endedAt - drain.startedAt)} s`);

    expect(done.code, done.stderr).toBe(0);
    expect(
      leftAtReturn.map((s) => s.name),
      'servers still on the host when kubectl drain returned',
    ).toEqual([]);

    await r.cluster.backInService();
  });
});
