// An agent upgrade in the middle of a held drain: `kubectl rollout restart ds/drainer` replaces the agent
// while servers are still on the host; the new agent resumes from the record and the drain still waits.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../functional/support/wait.ts';
import { figure, seconds, useReal } from './support/context.ts';
import { Departures } from './support/nova.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();

describe('kubectl rollout restart ds/drainer while a drain is held', () => {
  it('hands the evacuation to the new agent and the drain returns only after the last server left', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const servers = await r.nova.boot('rollout', 4);
    const oldAgent = (await r.cluster.readyAgent())!;

    const drain = r.cluster.drain();
    const departures = new Departures(r.nova, servers);
    await r.cluster.waitPhase('Evacuating', 120_000);
    const restartAt = Date.now();
    await r.k.ok(['rollout', 'restart', 'ds/drainer', '-n', NAMESPACE]);
    await r.k.ok(['rollout', 'status', 'ds/drainer', '-n', NAMESPACE, '--timeout=300s'], {
      timeoutMs: 310_000,
    });
    const newAgent = await waitFor(async () => await r.cluster.readyAgent(), { what: 'the new agent Ready' });
    const onHostAtHandover = (await r.nova.stillOnHost(servers)).length;
    const done = await drain.done;
    const leftAtReturn = await r.nova.stillOnHost(servers);
    await departures.end();

    expect(newAgent.metadata.uid).not.toBe(oldAgent.metadata.uid);
    expect(done.code, done.stderr).toBe(0);
    expect(
      leftAtReturn.map((s) => s.name),
      'servers still on the host when kubectl drain returned',
    ).toEqual([]);
    expect(done.endedAt).toBeGreaterThanOrEqual(departures.lastLeftAt!);
    figure(
      ctx,
      'servers still on the host when the new agent was Ready',
      `${onHostAtHandover} of ${servers.length}`,
    );
    figure(ctx, 'rollout restart to the new agent Ready', `${seconds(Date.now() - restartAt)} s`);
    figure(
      ctx,
      'drain returned after the last server left by',
      `${seconds(done.endedAt - departures.lastLeftAt!)} s`,
    );

    await r.cluster.backInService();
  });
});
