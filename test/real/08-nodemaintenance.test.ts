// A medik8s NodeMaintenance (the CRD from daemonset/components/nodemaintenance-crd) on a real API server: the
// agent takes it over (finalizer), cordons, evacuates and reports Succeeded; deleting it restores the node.
import { describe, expect, it } from 'vitest';
import { createNodeMaintenance, deleteAndWaitGone, waitSucceeded } from './support/maintenance.ts';
import { figure, seconds, useReal } from './support/context.ts';

const real = useReal();
const NM = 'drainer-real-nm';

describe('a NodeMaintenance', () => {
  it('evacuates the node with status Succeeded, and its deletion puts the node back', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('nm', 2);
    const t0 = Date.now();
    await createNodeMaintenance(r, NM, 'drainer real suite');
    try {
      const done = await waitSucceeded(r, NM);
      figure(ctx, 'NodeMaintenance created to Succeeded, 2 servers', `${seconds(Date.now() - t0)} s`);

      expect(done.metadata.finalizers).toContain('drainer.dev/maintenance');
      expect((await r.cluster.node()).spec.unschedulable).toBe(true);
      expect(await r.cluster.record()).toMatchObject({
        phase: 'Evacuated',
        trigger: `NodeMaintenance/${NM}`,
      });
      expect((await r.nova.stillOnHost(servers)).map((s) => s.name)).toEqual([]);
      expect((await r.nova.service()).status).toBe('disabled');
    } finally {
      await deleteAndWaitGone(r, NM);
    }
    await r.cluster.waitPhase(undefined);
    expect((await r.cluster.node()).spec.unschedulable).toBeFalsy();
    expect((await r.nova.service()).status).toBe('enabled');
    await r.cluster.waitGateHeld();
  });
});
