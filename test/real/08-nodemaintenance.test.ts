// A medik8s NodeMaintenance (the CRD from daemonset/components/nodemaintenance-crd) on a real API server: the
// agent takes it over (finalizer), cordons, evacuates and reports Succeeded; deleting it restores the node.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { figure, seconds, useReal } from './support/context.ts';

const real = useReal();
const NM = 'drainer-real-nm';

describe('a NodeMaintenance', () => {
  it('evacuates the node with status Succeeded, and its deletion puts the node back', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('nm', 2);
    const nm = {
      apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
      kind: 'NodeMaintenance',
      metadata: { name: NM },
      spec: { nodeName: r.env.node, reason: 'drainer real suite' },
    };
    const t0 = Date.now();
    await r.k.ok(['create', '-f', '-'], { input: JSON.stringify(nm) });
    try {
      const done = await waitFor(
        async () => {
          const o = await r.k.get(['nodemaintenance', NM]);
          return o?.status?.phase === 'Succeeded' ? o : undefined;
        },
        { what: `NodeMaintenance ${NM} Succeeded`, timeoutMs: 300_000 },
      );
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
      await r.k.run(['delete', 'nodemaintenance', NM, '--wait=false']);
    }
    await waitFor(async () => ((await r.k.get(['nodemaintenance', NM])) ? undefined : true), {
      what: `NodeMaintenance ${NM} gone (drainer removes its finalizer after the restore)`,
      timeoutMs: 180_000,
    });
    await r.cluster.waitPhase(undefined);
    expect((await r.cluster.node()).spec.unschedulable).toBeFalsy();
    expect((await r.nova.service()).status).toBe('enabled');
    await r.cluster.waitGateHeld();
  });
});
