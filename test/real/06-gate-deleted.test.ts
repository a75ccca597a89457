// Someone deletes the gate pod while a drain is held (a cleanup script, `kubectl delete pod --all`): the drain
// must still wait for the VMs, and the gate must come back. Needs the gate-healing issue (27) to pass.
import { describe, it } from 'vitest';
import { useReal } from './support/context.ts';
import { expectDrainOutlastedServers } from './support/drain-outcome.ts';
import { gateName } from './support/cluster.ts';
import { Departures } from './support/nova.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();

describe('the gate pod deleted while a drain is held', () => {
  it('keeps the drain waiting until the last server left, and the gate holds again', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('gate-deleted', 3);

    const drain = r.cluster.drain();
    const departures = new Departures(r.nova, servers);
    await r.cluster.waitPhase('Evacuating', 120_000);
    await r.k.ok(['delete', 'pod', '-n', NAMESPACE, gateName(r.env.node), '--wait=false']);
    await expectDrainOutlastedServers(ctx, r, drain, servers, departures);

    await r.cluster.backInService();
  });
});
