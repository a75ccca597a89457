// Story: Karpenter disrupts a hypervisor node. It does not cordon and does not run kubectl: it
// taints karpenter.sh/disrupted:NoSchedule and its terminator evicts the node's pods itself, then
// terminates the instance once no pod it waits for is left. Its rules are written down here as
// facts (kubernetes-sigs/karpenter pkg/utils/pod/scheduling.go, read for this test):
//   IsEvictable(pod) = IsActive && !ToleratesDisruptedNoScheduleTaint && !IsOwnedByNode && !HasDoNotDisrupt
//   IsDrainable(pod) = !ToleratesDisruptedNoScheduleTaint && !IsStuckTerminating && !IsOwnedByNode
//   IsWaitingEviction(pod) = !IsTerminal && IsDrainable      (the node is terminated when none is left)
//   IsActive = !IsTerminal (Succeeded/Failed) && !IsTerminating (deletionTimestamp)
//   IsStuckTerminating = terminating for more than a minute past its deletionTimestamp
// and its terminator evicts critical pods (system-node-critical, system-cluster-critical) only once
// the others are gone, and retries an eviction answered 429.
import { afterEach, describe, expect, it } from 'vitest';
import { isApiError } from '../../src/errors.ts';
import { gateName, gatePod } from '../../src/kube/gate.ts';
import type { KubeObject, KubePod, Taint } from '../../src/kube/types.ts';
import { smallWorld } from './scenario.ts';
import { startStack, until, type Stack } from './stack.ts';

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

const DISRUPTED: Taint = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };

/** Kubernetes' toleration match (an empty key with Exists tolerates every taint). */
const tolerates = (t: Toleration, taint: Taint): boolean =>
  (!t.effect || t.effect === taint.effect) &&
  (t.operator === 'Exists'
    ? !t.key || t.key === taint.key
    : t.key === taint.key && (t.value ?? '') === (taint.value ?? ''));

const spec = (p: KubeObject) =>
  (p.spec ?? {}) as { tolerations?: Toleration[]; priorityClassName?: string; nodeName?: string };
const phase = (p: KubeObject) => (p.status as { phase?: string } | undefined)?.phase;
const ownedBy = (p: KubeObject, kind: string) =>
  (p.metadata.ownerReferences ?? []).some((r) => r.kind === kind);

const toleratesDisrupted = (p: KubeObject) =>
  (spec(p).tolerations ?? []).some((t) => tolerates(t, DISRUPTED));
const isTerminal = (p: KubeObject) => phase(p) === 'Succeeded' || phase(p) === 'Failed';
const isTerminating = (p: KubeObject) => p.metadata.deletionTimestamp !== undefined;
const isActive = (p: KubeObject) => !isTerminal(p) && !isTerminating(p);
const stuckTerminating = (p: KubeObject, now: number) =>
  isTerminating(p) && now - Date.parse(p.metadata.deletionTimestamp ?? '') > 60_000;
const doNotDisrupt = (p: KubeObject) => p.metadata.annotations?.['karpenter.sh/do-not-disrupt'] === 'true';

const isEvictable = (p: KubeObject) =>
  isActive(p) && !toleratesDisrupted(p) && !ownedBy(p, 'Node') && !doNotDisrupt(p);
const isDrainable = (p: KubeObject, now: number) =>
  !toleratesDisrupted(p) && !stuckTerminating(p, now) && !ownedBy(p, 'Node');
const isWaitingEviction = (p: KubeObject, now: number) => !isTerminal(p) && isDrainable(p, now);
const critical = (p: KubeObject) =>
  ['system-node-critical', 'system-cluster-critical'].includes(spec(p).priorityClassName ?? '');

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

/** Karpenter's terminator against the sandbox: evict by group, retry 429, until no pod is waited for. */
async function karpenterTerminate(
  s: Stack,
  node: string,
  retryMs: number,
): Promise<{ evicted: string[]; retries: number }> {
  const evicted: string[] = [];
  let retries = 0;
  for (;;) {
    const { items } = await s.k.request<{ items: KubePod[] }>({
      path: '/api/v1/pods',
      query: { fieldSelector: `spec.nodeName=${node}` },
    });
    const now = Date.now();
    const waiting = items.filter((p) => isWaitingEviction(p, now));
    if (!waiting.length) return { evicted, retries };
    const evictable = waiting.filter(isEvictable);
    // critical pods after the others; DaemonSet pods after the rest of their group
    const groups = [
      evictable.filter((p) => !critical(p) && !ownedBy(p, 'DaemonSet')),
      evictable.filter((p) => !critical(p) && ownedBy(p, 'DaemonSet')),
      evictable.filter((p) => critical(p) && !ownedBy(p, 'DaemonSet')),
      evictable.filter((p) => critical(p) && ownedBy(p, 'DaemonSet')),
    ];
    for (const p of groups.find((g) => g.length) ?? []) {
      const { namespace = '', name = '' } = p.metadata;
      try {
        await s.k.request({
          method: 'POST',
          path: `/api/v1/namespaces/${namespace}/pods/${name}/eviction`,
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
        });
        evicted.push(`${namespace}/${name}`);
      } catch (err) {
        if (isApiError(err) && err.status === 429) retries++;
        else if (!(isApiError(err) && err.status === 404)) throw err;
      }
    }
    await new Promise((r) => setTimeout(r, retryMs));
  }
}

describe('Karpenter disrupts a node with servers (full stack)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it('waits for the gate: the instance is terminated only after the last server left', async () => {
    const s = await startStack({ scenario: smallWorld({ servers: 6, migrationSeconds: 20 }) });
    stack = s;
    const agent = s.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);
    const gate = () =>
      s.k
        .request<KubePod>({ path: `/api/v1/namespaces/drainer/pods/${gateName('node-a')}` })
        .catch(() => undefined);
    await until('gate pod running', async () => (await gate())?.status?.phase === 'Running');
    const os = s.sandbox.openstack.state;
    let lastLeft = 0;
    const off = os.subscribe(() => {
      if (!lastLeft && os.serversOnHost('node-a').length === 0) lastLeft = Date.now();
    });

    // Karpenter taints (it does not cordon), then its terminator drains the node
    await s.k.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-a',
      contentType: 'application/merge-patch+json',
      body: { spec: { taints: [DISRUPTED] } },
    });
    const done = await karpenterTerminate(s, 'node-a', 100);
    const terminatedAt = Date.now();
    const onHost = os.serversOnHost('node-a').map((v) => v.name);
    off();

    expect(onHost).toEqual([]);
    expect(lastLeft).toBeGreaterThan(0);
    expect(terminatedAt).toBeGreaterThanOrEqual(lastLeft);
    // it met the gate's PDB (429) and waited; the gate opened once the VMs had left
    expect(done.retries).toBeGreaterThan(0);
    expect(await gate()).toBeUndefined();
  });
});
