// A NodeMaintenance CRD installed after the agent started (issue 52): operators install the medik8s operator
// after drainer as often as before it. The case removes the CRD the overlay installed, restarts the agent
// without it, applies the CRD again (the file of daemonset/components/nodemaintenance-crd) and creates a
// NodeMaintenance: the running agent takes it over and reports Succeeded, without a restart. Its deletion
// puts the node back; the CRD stays, as the overlay has it.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { createNodeMaintenance, deleteAndWaitGone, waitSucceeded } from './support/maintenance.ts';
import { figure, REPO, seconds, useReal } from './support/context.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();
const CRD = 'nodemaintenances.nodemaintenance.medik8s.io';
const CRD_FILE = path.join(REPO, 'daemonset/components/nodemaintenance-crd/crd-nodemaintenance.yaml');
const NM = 'drainer-real-nm-later';

describe('a NodeMaintenance CRD applied after the agent started', () => {
  it('is picked up by the running agent: a NodeMaintenance then ends Succeeded, and its deletion restores', async (ctx) => {
    const r = real();
    r.expect4xx(
      404,
      /nodemaintenance\.medik8s\.io/,
      'the case removes the NodeMaintenance CRD under the agent',
    );
    await r.cluster.waitGateHeld();
    await r.k.ok(['delete', 'crd', CRD, '--wait=true'], { timeoutMs: 120_000 });
    let agentUid: string;
    try {
      // an agent that starts while no CRD is there
      await r.k.ok(['rollout', 'restart', 'ds/drainer', '-n', NAMESPACE]);
      await r.k.ok(['rollout', 'status', 'ds/drainer', '-n', NAMESPACE, '--timeout=300s'], {
        timeoutMs: 310_000,
      });
      agentUid = (
        await waitFor(async () => await r.cluster.readyAgent(), { what: 'the restarted agent Ready' })
      ).metadata.uid;
      await r.cluster.waitGateHeld();
    } finally {
      await r.k.ok(['apply', '-f', CRD_FILE]);
    }
    await r.k.ok(['wait', '--for=condition=Established', `crd/${CRD}`, '--timeout=60s'], {
      timeoutMs: 70_000,
    });

    const servers = await r.nova.boot('crd-later', 2);
    const t0 = Date.now();
    await createNodeMaintenance(r, NM, 'drainer real suite: CRD applied after the agent started');
    try {
      const done = await waitSucceeded(r, NM);
      figure(
        ctx,
        'NodeMaintenance (CRD applied after the agent) created to Succeeded, 2 servers',
        `${seconds(Date.now() - t0)} s`,
      );
      expect(done.metadata.finalizers).toContain('drainer.dev/maintenance');
      expect(await r.cluster.record()).toMatchObject({
        phase: 'Evacuated',
        trigger: `NodeMaintenance/${NM}`,
      });
      expect((await r.nova.stillOnHost(servers)).map((s) => s.name)).toEqual([]);
      // the same agent: no restart was needed to see the CRD
      expect((await r.cluster.readyAgent())?.metadata.uid).toBe(agentUid);
    } finally {
      await deleteAndWaitGone(r, NM);
    }
    await r.cluster.waitPhase(undefined);
    expect((await r.nova.service()).status).toBe('enabled');
    await r.cluster.waitGateHeld();
  });
});
