// The stock install on a real cluster: `kubectl apply -k` of the test overlay brings the agent to Ready, its
// drain gate holds as the real disruption controller counts it, and the gate pod passes Pod Security
// `restricted` on the real admission plugin.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gateName } from './support/cluster.ts';
import { describe, expect, it } from 'vitest';
import { REPO, figure, seconds, useReal } from './support/context.ts';
import { install, removeLeftovers } from './support/install.ts';
import { NAMESPACE } from './support/overlay.ts';

const real = useReal();
const RESTRICTED_NS = 'drainer-real-restricted';

describe('install', () => {
  it('kubectl apply -k: the agent pod Ready, the gate pod Running, its PDB counted by the disruption controller', async (ctx) => {
    const r = real();
    await removeLeftovers(r);
    await r.nova.enableIfOurs();
    await r.k.run(['uncordon', r.env.node]);

    const { overlay, readyMs } = await install(r);
    overlay.remove();

    const gate = await r.cluster.waitGateHeld();
    expect(gate.pod).toMatchObject({ phase: 'Running', ready: true, terminating: false });
    expect(gate.pdb).toMatchObject({
      observed: true,
      disruptionsAllowed: 0,
      currentHealthy: 1,
      expectedPods: 1,
    });
    expect(await r.cluster.phase()).toBeUndefined();

    // the agent runs the image the manifests name, the one built from the Dockerfile into the node
    const stock = /image: (\S+)/.exec(readFileSync(path.join(REPO, 'daemonset/daemonset.yaml'), 'utf8'))?.[1];
    const agent = await r.cluster.readyAgent();
    expect(agent.spec.containers[0].image).toBe(stock);
    expect(agent.status.containerStatuses[0].image).toBe(stock);
    const onNode = ((await r.cluster.node()).status.images as { names?: string[] }[]).flatMap(
      (i) => i.names ?? [],
    );
    expect(onNode).toContain(stock);

    const version = JSON.parse(await r.k.ok(['version', '-o', 'json']));
    const image = ((await r.cluster.node()).status.images as { names: string[]; sizeBytes: number }[]).find(
      (i) => (i.names ?? []).some((n) => n.startsWith('ghcr.io/drainer-dev/drainer:')),
    );
    figure(ctx, 'Kubernetes (server)', version.serverVersion.gitVersion);
    figure(ctx, 'kubectl (client)', version.clientVersion.gitVersion);
    const nova = await r.nova.versions();
    figure(ctx, 'Nova (OpenStack compute API)', nova.api);
    figure(ctx, `Nova hypervisor of ${r.env.novaHost}`, nova.hypervisor);
    figure(ctx, 'image size as the kubelet reports it', `${Math.round((image?.sizeBytes ?? 0) / 1e6)} MB`);
    figure(ctx, 'install to agent Ready', `${seconds(readyMs)} s`);
  });

  it("the gate pod's spec is admitted under Pod Security restricted (server-side dry run); the agent's is not", async () => {
    const r = real();
    await r.k.run(['create', 'namespace', RESTRICTED_NS]);
    await r.k.ok([
      'label',
      'namespace',
      RESTRICTED_NS,
      'pod-security.kubernetes.io/enforce=restricted',
      '--overwrite',
    ]);
    // the pod as it runs, in a namespace that enforces restricted (without its ServiceAccount, absent there)
    const asTemplate = (pod: { metadata: { name: string }; spec: Record<string, unknown> }) => {
      const { serviceAccountName: _a, serviceAccount: _b, ...spec } = pod.spec;
      return JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod.metadata.name, namespace: RESTRICTED_NS },
        spec,
      });
    };
    try {
      const gatePod = await r.k.get(['pod', '-n', NAMESPACE, gateName(r.env.node)]);
      const admitted = await r.k.run(['create', '--dry-run=server', '-f', '-'], {
        input: asTemplate(gatePod),
      });
      expect(admitted.stderr).toBe('');
      expect(admitted.code).toBe(0);

      // the check bites: the agent on the host's network is refused there
      const agent = (await r.cluster.readyAgent())!;
      const refused = await r.k.run(['create', '--dry-run=server', '-f', '-'], { input: asTemplate(agent) });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/violates PodSecurity "restricted:.*": host namespaces/);
    } finally {
      await r.k.run(['delete', 'namespace', RESTRICTED_NS, '--wait=false']);
    }
  });

  it("the agent's working set, from the kubelet's summary API, stays under its memory request", async (ctx) => {
    const r = real();
    // the summary is the kubelet's cAdvisor view, refreshed every few seconds
    let ws: number | undefined;
    for (let i = 0; i < 30 && ws === undefined; i++) {
      ws = await r.cluster.agentWorkingSet();
      if (ws === undefined) await new Promise((res) => setTimeout(res, 2_000));
    }
    expect(ws).toBeGreaterThan(10 * 2 ** 20);
    expect(ws).toBeLessThan(96 * 2 ** 20);
    figure(ctx, 'agent working set, idle after install', `${(ws! / 2 ** 20).toFixed(1)} MiB`);
  });
});
