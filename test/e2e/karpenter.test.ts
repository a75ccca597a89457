// Story: Karpenter disrupts a hypervisor node. It does not cordon and does not run kubectl: it
// taints karpenter.sh/disrupted:NoSchedule and its terminator evicts the node's pods itself, then
// terminates the instance once no pod it waits for is left. Its rules, written down as facts from
// kubernetes-sigs/karpenter pkg/utils/pod/scheduling.go, live in bench/chaos/takers.ts (the chaos
// soak drains with them too); the first stories check them against drainer's gate pod.
import { afterEach, describe, expect, it } from 'vitest';
import {
  isEvictable,
  isWaitingEviction,
  karpenterTerminate,
  toleratesDisrupted,
  tolerates,
  DISRUPTED,
  type Toleration,
} from '../../bench/chaos/takers.ts';
import { gatePod } from '../../src/kube/gate.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { smallWorld } from './scenario.ts';
import { gatePodOf, gateRunning } from './gate-stack.ts';
import { lastLeft } from './held-drain.ts';
import { startStack, until, type Stack } from './stack.ts';
import { stackTakerPort } from './taker-port.ts';

const spec = (p: KubeObject) => (p.spec ?? {}) as { tolerations?: Toleration[] };

describe("Karpenter's eviction rules (facts)", () => {
  const pdb = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', name: 'g', uid: 'u', controller: true };

  it('a pod that tolerates every taint (operator Exists, no key) is neither evicted nor waited for', () => {
    const old: KubeObject = {
      metadata: { name: 'old-gate' },
      spec: { tolerations: [{ operator: 'Exists' }] },
    };
    expect(isEvictable(old)).toBe(false);
    expect(isWaitingEviction(old, Date.now())).toBe(false);
  });

  it("drainer's gate pod is evicted (meeting its PDB) and waited for", () => {
    const pod = gatePod('drainer', 'node-a', 'pause', pdb);
    expect(toleratesDisrupted(pod)).toBe(false);
    expect(isEvictable(pod)).toBe(true);
    expect(isWaitingEviction(pod, Date.now())).toBe(true);
    // it still tolerates the cordon, drainer's and KubeVirt's drain taints
    for (const key of ['node.kubernetes.io/unschedulable', 'drainer.dev/evacuating', 'kubevirt.io/drain'])
      expect(
        (spec(pod).tolerations ?? []).some((t) => tolerates(t, { key, effect: 'NoSchedule' })),
        key,
      ).toBe(true);
  });

  it('a gate pod deleted more than a minute ago is no longer waited for (its finalizer does not hold Karpenter)', () => {
    const pod = gatePod('drainer', 'node-a', 'pause', pdb);
    const now = Date.now();
    pod.metadata.deletionTimestamp = new Date(now - 61_000).toISOString();
    expect(isWaitingEviction(pod, now)).toBe(false);
  });
});

/** Karpenter's terminator against the sandbox (its rules: bench/chaos/takers.ts). */
const karpenterOn = (s: Stack, node: string, retryMs: number) =>
  karpenterTerminate(stackTakerPort(s), node, { retryMs });

describe('Karpenter disrupts a node with servers (full stack)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it('waits for the gate: the instance is terminated only after the last server left', async () => {
    const s = await startStack({ scenario: smallWorld({ servers: 6, migrationSeconds: 20 }) });
    stack = s;
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);
    const gate = () => gatePodOf(s);
    await gateRunning(s);
    const os = s.sandbox.openstack.state;
    const left = lastLeft(os);

    // Karpenter taints (it does not cordon), then its terminator drains the node
    await s.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-a',
      contentType: 'application/merge-patch+json',
      body: { spec: { taints: [DISRUPTED] } },
    });
    const done = await karpenterOn(s, 'node-a', 100);
    const terminatedAt = Date.now();
    const onHost = os.serversOnHost('node-a').map((v) => v.name);
    left.off();

    expect(onHost).toEqual([]);
    expect(left.at()).toBeGreaterThan(0);
    expect(terminatedAt).toBeGreaterThanOrEqual(left.at());
    // it met the gate's PDB (429) and waited; the gate opened once the VMs had left
    expect(done.retries).toBeGreaterThan(0);
    expect(await gate()).toBeUndefined();
  });
});
