// A cordon on a real node: the agent moves every server off the compute host through the real Nova, then
// evicts the ordinary pods, releases its gate; the uncordon puts the host back and holds the gate again.
import { afterAll, describe, expect, it } from 'vitest';
import { Apps } from './support/apps.ts';
import { figure, seconds, useReal } from './support/context.ts';

const real = useReal();
const apps = () => new Apps(real().k);

describe('cordon, evacuation, uncordon', () => {
  afterAll(async () => {
    await apps().remove();
    await real().k.run(['uncordon', real().env.node]);
  });

  it('moves every server and then the pods on a cordon, and undoes exactly that on the uncordon', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('evac', 3);
    const before = await apps().deploy(2);

    const t0 = Date.now();
    await r.cluster.cordon();
    await r.cluster.waitPhase('Evacuated');
    figure(ctx, 'cordon to Evacuated, 3 servers', `${seconds(Date.now() - t0)} s`);

    for (const s of servers) {
      const now = await r.nova.server(s.id);
      expect({ status: now?.status, task: now?.taskState, moved: now?.host !== r.nova.host }).toEqual({
        status: 'ACTIVE',
        task: null,
        moved: true,
      });
    }
    const svc = await r.nova.service();
    expect(svc.status).toBe('disabled');
    expect(svc.disabledReason).toMatch(/^drainer:/);
    // drainer's own drain evicted the pods; their replacements wait for a schedulable node
    const after = await apps().pods();
    const old = new Set(before.map((p) => p.metadata.uid));
    expect(after.filter((p) => old.has(p.metadata.uid) && !p.metadata.deletionTimestamp)).toEqual([]);
    expect(after.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.status.phase)).toEqual([
      'Pending',
      'Pending',
    ]);
    // the VMs have left: the gate lets drains through
    expect((await r.cluster.gate()).pod).toBeUndefined();

    const t1 = Date.now();
    await r.cluster.uncordon();
    await r.cluster.waitPhase(undefined);
    figure(ctx, 'uncordon to in service', `${seconds(Date.now() - t1)} s`);

    expect((await r.nova.service()).status).toBe('enabled');
    expect((await r.cluster.node()).spec.unschedulable).toBeFalsy();
    expect(((await r.cluster.node()).spec.taints ?? []).map((t: { key: string }) => t.key)).not.toContain(
      'drainer.dev/evacuating',
    );
    await r.cluster.waitGateHeld();
    await apps().waitRunning(2);
  });
});
