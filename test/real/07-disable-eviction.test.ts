// `kubectl drain --disable-eviction` deletes pods instead of evicting them, so no PDB holds it; it then waits
// until each pod is gone. The gate must still keep it until the VMs left. Needs the gate-healing issue (27).
import { describe, it } from 'vitest';
import { useReal } from './support/context.ts';
import { expectDrainOutlastedServers } from './support/drain-outcome.ts';
import { Departures } from './support/nova.ts';

const real = useReal();

describe('kubectl drain --disable-eviction', () => {
  it('returns only after the last server left the host', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('no-eviction', 3);

    const drain = r.cluster.drain('--disable-eviction');
    const departures = new Departures(r.nova, servers);
    await expectDrainOutlastedServers(ctx, r, drain, servers, departures);

    await r.cluster.backInService();
  });
});
