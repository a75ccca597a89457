// `drainer release --force` during a held drain, then the restore, then the next maintenance: the release lets
// that one drain go on (the operator's word), belongs to that maintenance only, and the restore holds the gate
// again before nova-compute is enabled. The next drain returns only after its last server left.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { releaseGateNow } from '../../src/core/gate/release.ts';
import { createKubeClients } from '../../src/kube/client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { waitFor } from '../functional/support/wait.ts';
import { Cluster } from './support/cluster.ts';
import { figure, seconds, useReal } from './support/context.ts';
import { expectDrainOutlastedServers } from './support/drain-outcome.ts';
import { install } from './support/install.ts';
import { Departures } from './support/nova.ts';

const real = useReal();

describe('a release followed by a restore', () => {
  it('lets that drain go, holds again before the host takes VMs, and the next drain waits for its servers', async (ctx) => {
    const r = real();
    if ((await r.cluster.agents()).length === 0) (await install(r)).overlay.remove();
    await r.cluster.waitGateHeld();
    const first = await r.nova.boot('release', 3);

    // the operator's override, as `drainer release --node <node> --force` does it
    const drain = r.cluster.drain();
    await r.cluster.waitPhase('Evacuating', 120_000);
    const k = createKubeClients({ kubeconfigYaml: readFileSync(r.env.kubeconfig, 'utf8') });
    const left = await r.nova.stillOnHost(first);
    const released = await releaseGateNow({
      k,
      config: configSchema.parse({}),
      node: r.env.node,
      log: createLogger({ level: 'silent' }),
      force: true,
      remaining: async () => ({ names: left.map((s) => `nova/${s.name}`) }),
    });
    expect(released.released, released.lines.join('\n')).toBe(true);
    const done = await drain.done;
    expect(done.code, done.stderr).toBe(0);
    figure(
      ctx,
      'servers on the host when the released drain returned',
      (await r.nova.stillOnHost(first)).length,
    );

    // the restore: the gate holds again before nova-compute is enabled, and the release is gone with it
    await r.cluster.waitPhase('Evacuated', 600_000);
    await r.cluster.uncordon();
    await waitFor(async () => ((await r.nova.service()).status === 'enabled' ? true : undefined), {
      what: `nova-compute on ${r.nova.host} enabled again`,
      timeoutMs: 120_000,
      intervalMs: 100,
    });
    const gateAtEnable = await r.cluster.gate();
    figure(
      ctx,
      'gate pod when nova-compute was enabled again',
      gateAtEnable.pod ? `${gateAtEnable.pod.phase}, ready ${gateAtEnable.pod.ready}` : 'absent',
    );
    expect(Cluster.held(gateAtEnable), JSON.stringify(gateAtEnable)).toBe(true);
    await r.cluster.waitPhase(undefined);
    expect((await r.cluster.node()).metadata.annotations?.['drainer.dev/gate-released']).toBeUndefined();
    await r.cluster.waitGateHeld();

    // the next maintenance: the earlier release opens nothing
    const second = await r.nova.boot('after-release', 2);
    const next = r.cluster.drain();
    const departures = new Departures(r.nova, second);
    await expectDrainOutlastedServers(ctx, r, next, second, departures);
    figure(ctx, 'second drain took', `${seconds(Date.now() - next.startedAt)} s`);

    await r.cluster.backInService();
  });
});
