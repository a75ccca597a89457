// The API server goes away in the middle of an evacuation (an upgrade of the control plane) and comes back:
// the agent's watches and writes recover, and the evacuation finishes with every server moved.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { figure, seconds, useReal } from './support/context.ts';
import { apiServerControl } from './support/kit.ts';

const real = useReal();

describe('an API-server restart mid-evacuation', () => {
  it('the evacuation finishes after the API server is back', async (ctx) => {
    const r = real();
    // a kube-apiserver just started serves before its RBAC authorizer's caches have synced: for
    // that moment it answers 403 to rights the agent has, on any resource it reads or watches (its
    // Node at load ~9; the CRDs and the gate's pods at load 2), and the agent retries
    r.expect4xx(403, /^\/apis?\//, 'the restarted API server answers 403 until its RBAC caches sync');
    const api = apiServerControl();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('apiserver', 4);
    const agent = (await r.cluster.readyAgent())!;

    await r.cluster.cordon();
    await r.cluster.waitPhase('Evacuating', 120_000);
    const stoppedAt = Date.now();
    let onHostWhileDown: number;
    try {
      await api.stop();
      onHostWhileDown = (await r.nova.stillOnHost(servers)).length;
      await sleep(15_000);
    } finally {
      await api.start();
    }
    const backAt = Date.now();
    await r.cluster.waitPhase('Evacuated');
    figure(ctx, 'API server down', `${seconds(backAt - stoppedAt)} s`);
    figure(ctx, 'servers on the host when it stopped', `${onHostWhileDown} of ${servers.length}`);
    figure(ctx, 'API server back to Evacuated', `${seconds(Date.now() - backAt)} s`);

    expect((await r.nova.stillOnHost(servers)).map((s) => s.name)).toEqual([]);
    expect((await r.nova.service()).status).toBe('disabled');
    // the same agent, Ready again: its readiness (watches listed) comes back a probe period after they relist,
    // which may be after it wrote Evacuated
    const now = await waitFor(async () => await r.cluster.readyAgent(), {
      what: 'the agent Ready again',
      timeoutMs: 120_000,
    });
    figure(ctx, 'agent restarts', now.status.containerStatuses?.[0]?.restartCount ?? 0);
    expect(now.metadata.uid).toBe(agent.metadata.uid);

    await r.cluster.backInService();
  });
});
