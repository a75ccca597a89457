// The restore race on a real kubelet: an uncordon re-creates the gate pod, which is Pending for seconds (the
// eviction API skips PDBs for a pod that is not Running). A drain in that window must still wait until
// drainer has found the host empty again, and the gate must hold before the host takes VMs again.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { Cluster } from './support/cluster.ts';
import { figure, seconds, useReal } from './support/context.ts';

const real = useReal();

describe('a drain right after a restore', () => {
  it('finds the gate holding when the host takes VMs again, and waits for drainer to find the host empty', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    await r.cluster.cordon();
    await r.cluster.waitPhase('Evacuated');

    await r.cluster.uncordon();
    await waitFor(async () => ((await r.nova.service()).status === 'enabled' ? true : undefined), {
      what: `nova-compute on ${r.nova.host} enabled again`,
      timeoutMs: 120_000,
      intervalMs: 100,
    });
    const gateAtEnable = await r.cluster.gate();
    const drain = r.cluster.drain();
    const done = await drain.done;
    const phaseAtReturn = await r.cluster.phase();
    figure(
      ctx,
      'gate pod when nova-compute was enabled again',
      gateAtEnable.pod ? `${gateAtEnable.pod.phase}, ready ${gateAtEnable.pod.ready}` : 'absent',
    );
    figure(ctx, 'drain took', `${seconds(done.endedAt - drain.startedAt)} s`);

    expect.soft(Cluster.held(gateAtEnable), JSON.stringify(gateAtEnable)).toBe(true);
    expect(done.code, done.stderr).toBe(0);
    // drainer found the host empty before the drain returned (a gate still Pending lets it through at once)
    expect(phaseAtReturn).toBe('Evacuated');

    await r.cluster.backInService();
  });
});
