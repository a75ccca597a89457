// The agent pod force-deleted in the middle of an evacuation (`kubectl delete pod --force --grace-period=0`):
// no graceful hand-over, the old process may still run for a moment beside its successor. The successor
// takes the node from the record, the drain still waits for the last server, and every server ends up
// running on another host (issue 48: what drainer changed outlives the agent).
import { describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { figure, seconds, useReal } from './support/context.ts';
import { expectDrainWaitedForTheServers, heldDrainWhile } from './support/held-drain.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();

describe('the agent pod force-deleted while a drain is held', () => {
  it('its successor resumes from the record and the drain returns only after the last server left', async (ctx) => {
    const r = real();
    let phaseAtReady: string | undefined;
    const held = await heldDrainWhile(r, 'force', 4, async ({ oldAgent, servers }) => {
      const onHost = (await r.nova.stillOnHost(servers)).length;
      figure(ctx, 'servers still on the host at the force delete', `${onHost} of ${servers.length}`);
      const killedAt = Date.now();
      await r.k.ok(['delete', 'pod', oldAgent.metadata.name, '-n', NAMESPACE, '--force', '--grace-period=0']);
      await waitFor(
        async () => {
          const a = await r.cluster.readyAgent();
          return a && a.metadata.uid !== oldAgent.metadata.uid ? a : undefined;
        },
        { what: 'a new agent Ready', timeoutMs: 180_000 },
      );
      figure(ctx, 'force delete to the successor Ready (goal ≤ 30 s)', `${seconds(Date.now() - killedAt)} s`);
      phaseAtReady = await r.cluster.phase();
    });
    const after = await Promise.all(held.servers.map((s) => r.nova.server(s.id)));

    expectDrainWaitedForTheServers(held);
    // No server lost or stopped: each runs, on another host.
    expect(after.map((s) => [s?.name, s?.status, s?.host === r.nova.host])).toEqual(
      held.servers.map((s) => [s.name, 'ACTIVE', false]),
    );
    // The record outlived the agent: the successor went on from it, not from a new maintenance.
    expect(['Evacuating', 'Evacuated']).toContain(phaseAtReady);
    expect(await r.cluster.phase()).toBe('Evacuated');
    figure(
      ctx,
      'drain returned after the last server left by',
      `${seconds(held.done.endedAt - held.lastLeftAt)} s`,
    );

    await r.cluster.backInService();
  });
});
