// A settings change in an overlay (issue 52), README's way ("Changing settings"): a config.yaml beside the
// kustomization and `configMapGenerator: [{name: drainer-config, behavior: merge, files: [config.yaml]}]`. The
// ConfigMap's name carries its content's hash, so `kubectl apply -k` alone rolls the agents: a new pod that
// mounts the new ConfigMap and runs with the new setting. The suite's own overlay is applied again after.
import { afterAll, describe, expect, it } from 'vitest';
import { figure, seconds, useReal } from './support/context.ts';
import { reapply } from './support/install.ts';
import { NAMESPACE } from './support/overlay.ts';
import type { Obj } from './support/kubectl.ts';

const real = useReal();

const configMapOf = (pod: Obj): string =>
  (pod.spec.volumes as Obj[]).find((v) => v.name === 'config').configMap.name as string;

/** pino's debug level in the agent's JSON log lines. */
const debugLines = async (pod: Obj): Promise<number> => {
  const r = await real().k.run(['logs', '-n', NAMESPACE, pod.metadata.name]);
  return r.stdout.split('\n').filter((l) => l.includes('"level":20')).length;
};

describe('a config change in an overlay', () => {
  afterAll(async () => {
    await reapply(real());
  });

  it('rolls the agents by itself: a new pod with the new ConfigMap, running with the new setting', async (ctx) => {
    const r = real();
    await r.cluster.waitGateHeld();
    const before = (await r.cluster.readyAgent())!;
    expect(await debugLines(before)).toBe(0);

    const t0 = Date.now();
    await reapply(r, { config: { logLevel: 'debug' } });
    const after = (await r.cluster.readyAgent())!;
    figure(ctx, 'apply -k of a config change to the new agent Ready', `${seconds(Date.now() - t0)} s`);

    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(configMapOf(after)).not.toBe(configMapOf(before));
    expect(configMapOf(after)).toMatch(/^drainer-config-[a-z0-9]{10}$/);
    const cm = await r.k.get(['configmap', '-n', NAMESPACE, configMapOf(after)]);
    expect(cm.data['config.yaml']).toMatch(/^logLevel: debug$/m);
    // the older ConfigMap stays for a rollback (README)
    expect(await r.k.get(['configmap', '-n', NAMESPACE, configMapOf(before)])).toBeDefined();
    // the new agent runs with it: pino's debug lines, which the stock `logLevel: info` never writes
    expect(await debugLines(after)).toBeGreaterThan(0);
    await r.cluster.waitGateHeld();
  });
});
