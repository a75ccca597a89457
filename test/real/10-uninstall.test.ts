// Removing drainer as the runbook says (the DaemonSet first, then `kubectl delete -k`): in the middle
// of an evacuation the agent stops and changes nothing more (its record stays, and the gate goes with
// the DaemonSet that owns it); installed again it resumes. Outside an evacuation nothing of drainer's is left, on either side.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { figure, seconds, useReal } from './support/context.ts';
import { currentOverlay, install, uninstall } from './support/install.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();

describe('uninstall', () => {
  it('during an evacuation: the gate goes, the record stays, and a new install resumes it', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('uninstall', 4);
    await r.cluster.cordon();
    // under way: the service disabled and a first server moving
    await waitFor(
      async () => {
        const disabled = (await r.nova.service()).disabledReason?.startsWith('drainer:');
        const moving = (await r.nova.stillOnHost(servers)).some((s) => s.taskState !== null);
        return disabled && (moving || (await r.nova.stillOnHost(servers)).length < servers.length)
          ? true
          : undefined;
      },
      { what: 'the evacuation under way in Nova', timeoutMs: 120_000, intervalMs: 250 },
    );

    const overlay = currentOverlay(r);
    try {
      await uninstall(r, overlay);
      const onHost = (await r.nova.stillOnHost(servers)).length;
      figure(ctx, 'servers on the host when drainer was gone', `${onHost} of ${servers.length}`);
      expect((await r.k.get(['pdb', '-n', NAMESPACE]))?.items ?? []).toEqual([]);
      expect(await r.cluster.phase()).toBe('Evacuating');
      expect((await r.nova.service()).disabledReason).toMatch(/^drainer:/);

      const { readyMs } = await install(r);
      figure(ctx, 'install again to agent Ready', `${seconds(readyMs)} s`);
      await r.cluster.waitPhase('Evacuated');
      expect((await r.nova.stillOnHost(servers)).map((s) => s.name)).toEqual([]);
      await r.cluster.backInService();
    } finally {
      overlay.remove();
    }
  });

  it('outside an evacuation: nothing of drainer is left on the cluster or in Nova', async () => {
    const r = real();
    // installed even when the case before failed half way
    if ((await r.cluster.agents()).length === 0) (await install(r)).overlay.remove();
    await r.cluster.ensureInService();
    await r.cluster.waitGateHeld();
    const overlay = currentOverlay(r);
    try {
      await uninstall(r, overlay);
    } finally {
      overlay.remove();
    }
    const node = await r.cluster.node();
    expect(node.metadata.annotations?.['drainer.dev/state']).toBeUndefined();
    expect(node.spec.unschedulable).toBeFalsy();
    expect((node.spec.taints ?? []).map((t: { key: string }) => t.key)).not.toContain(
      'drainer.dev/evacuating',
    );
    expect(await r.k.get(['clusterrole', 'drainer'])).toBeUndefined();
    expect((await r.k.get(['pods', '-A', '-l', 'app.kubernetes.io/name=drainer']))?.items).toEqual([]);
    expect((await r.nova.service()).status).toBe('enabled');
  });
});
