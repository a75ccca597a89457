// The DaemonSet re-created under a held drain (`kubectl delete ds --cascade=orphan`, then `kubectl apply -k`,
// as an operator changing an immutable field does): that is no uninstall. The agents keep their gate, the drain
// returns only after the last server left, and the gate's PDB is owned by the new DaemonSet (a later uninstall
// still takes it).
import { describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { gateName } from './support/cluster.ts';
import { figure, seconds, useReal } from './support/context.ts';
import { expectDrainOutlastedServers } from './support/drain-outcome.ts';
import { currentOverlay, install } from './support/install.ts';
import { Departures } from './support/nova.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();

describe('the DaemonSet re-created with --cascade=orphan while a drain is held', () => {
  it('keeps the drain waiting until the last server left, and the gate follows the new DaemonSet', async (ctx) => {
    const r = real();
    // installed even when an earlier case failed half way
    if ((await r.cluster.agents()).length === 0) (await install(r)).overlay.remove();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('ds-recreated', 4);

    const drain = r.cluster.drain();
    const departures = new Departures(r.nova, servers);
    await r.cluster.waitPhase('Evacuating', 120_000);
    const overlay = currentOverlay(r);
    const t0 = Date.now();
    try {
      await r.k.ok(['-n', NAMESPACE, 'delete', 'daemonset', 'drainer', '--cascade=orphan', '--wait=true'], {
        timeoutMs: 120_000,
      });
      await r.k.ok(['apply', '-k', overlay.dir]);
    } finally {
      overlay.remove();
    }
    const ds = await waitFor(async () => await r.k.get(['-n', NAMESPACE, 'daemonset', 'drainer']), {
      what: 'the new DaemonSet',
    });
    figure(
      ctx,
      'servers on the host when the DaemonSet was re-created',
      (await r.nova.stillOnHost(servers)).length,
    );
    await expectDrainOutlastedServers(ctx, r, drain, servers, departures);
    figure(ctx, 'DaemonSet re-created to the drain returning', `${seconds(Date.now() - t0)} s`);

    const owners = await waitFor(
      async () => {
        const pdb = await r.k.get(['-n', NAMESPACE, 'pdb', gateName(r.env.node)]);
        const uids = (pdb?.metadata.ownerReferences ?? []).map((o: { uid: string }) => o.uid);
        return uids.includes(ds.metadata.uid) ? uids : undefined;
      },
      { what: 'the gate PDB owned by the new DaemonSet', timeoutMs: 120_000 },
    );
    expect(owners).toContain(ds.metadata.uid);

    await r.cluster.backInService();
  });
});
