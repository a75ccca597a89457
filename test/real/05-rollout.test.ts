// An agent upgrade in the middle of a held drain: `kubectl rollout restart ds/drainer` replaces the agent
// while servers are still on the host; the new agent resumes from the record and the drain still waits.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { figure, seconds, useReal } from './support/context.ts';
import { expectDrainWaitedForTheServers, heldDrainWhile } from './support/held-drain.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();

describe('kubectl rollout restart ds/drainer while a drain is held', () => {
  it('hands the evacuation to the new agent and the drain returns only after the last server left', async (ctx) => {
    const r = real();
    let restartAt = 0;
    let newAgentUid: string | undefined;
    let onHostAtHandover = 0;
    const held = await heldDrainWhile(r, 'rollout', 4, async ({ servers }) => {
      restartAt = Date.now();
      await r.k.ok(['rollout', 'restart', 'ds/drainer', '-n', NAMESPACE]);
      await r.k.ok(['rollout', 'status', 'ds/drainer', '-n', NAMESPACE, '--timeout=300s'], {
        timeoutMs: 310_000,
      });
      const newAgent = await waitFor(async () => await r.cluster.readyAgent(), {
        what: 'the new agent Ready',
      });
      newAgentUid = newAgent.metadata.uid;
      figure(ctx, 'rollout restart to the new agent Ready', `${seconds(Date.now() - restartAt)} s`);
      onHostAtHandover = (await r.nova.stillOnHost(servers)).length;
    });

    expect(newAgentUid).not.toBe(held.oldAgent.metadata.uid);
    expectDrainWaitedForTheServers(held);
    figure(ctx, 'servers still on the host when the new agent was Ready', `${onHostAtHandover} of 4`);
    figure(
      ctx,
      'drain returned after the last server left by',
      `${seconds(held.done.endedAt - held.lastLeftAt)} s`,
    );

    await r.cluster.backInService();
  });
});
