// Story: the soak's other drains follow their tools' rules. Karpenter evicts the ordinary pods
// first, waits for drainer's gate pod (its PDB refuses the eviction) and no longer for a pod stuck
// terminating; Cluster API waits for every pod but DaemonSet pods, and past nodeDrainTimeout goes
// on whatever is left.
import { describe, expect, it } from 'vitest';
import { capiDrain, karpenterTerminate, type TakerPort } from '../../bench/chaos/takers.ts';
import type { KubePod } from '../../src/kube/types.ts';

const NOW = Date.parse('2026-11-26T12:00:00Z');

const pod = (
  name: string,
  o: { owner?: string; critical?: boolean; deletedAgoMs?: number } = {},
): KubePod => ({
  metadata: {
    name,
    namespace: 'ns',
    ...(o.owner ? { ownerReferences: [{ kind: o.owner, name: 'x', uid: 'u', apiVersion: 'v1' }] } : {}),
    ...(o.deletedAgoMs !== undefined
      ? { deletionTimestamp: new Date(NOW - o.deletedAgoMs).toISOString() }
      : {}),
  },
  spec: { nodeName: 'hv-1', ...(o.critical ? { priorityClassName: 'system-node-critical' } : {}) },
  status: { phase: 'Running' },
});

/** A node whose pods go when evicted, except those a budget guards (429 until `guardedUntil` passes). */
function node(pods: KubePod[], guarded: Set<string>) {
  let list = [...pods];
  const evictions: string[] = [];
  let passes = 0;
  const port: TakerPort = {
    pods: async () => list,
    evict: async (p) => {
      evictions.push(p.metadata.name ?? '');
      if (guarded.has(p.metadata.name ?? '')) return 429;
      list = list.filter((x) => x !== p);
      return 201;
    },
    now: () => NOW,
    sleep: async () => {
      passes++;
    },
  };
  return { port, evictions, left: () => list.map((p) => p.metadata.name), passes: () => passes };
}

describe("Karpenter's terminator", () => {
  it('evicts the ordinary pods before DaemonSet and critical ones, and is done once none is waited for', async () => {
    const n = node(
      [pod('dns', { critical: true }), pod('agent', { owner: 'DaemonSet' }), pod('web')],
      new Set(),
    );
    const r = await karpenterTerminate(n.port, 'hv-1', { retryMs: 1 });
    expect(r.done).toBe(true);
    expect(n.evictions).toEqual(['web', 'agent', 'dns']);
  });

  it('waits for the gate pod its PDB guards, and gives up only at its deadline', async () => {
    const n = node([pod('drainer-gate-hv-1'), pod('web')], new Set(['drainer-gate-hv-1']));
    const r = await karpenterTerminate(n.port, 'hv-1', { retryMs: 1, deadline: Date.now() + 50 });
    expect(r.done).toBe(false);
    expect(r.retries).toBeGreaterThan(1);
    expect(n.left()).toEqual(['drainer-gate-hv-1']);
  });

  it('no longer waits for a pod terminating for more than a minute (a gate pod held by its finalizer)', async () => {
    const n = node([pod('drainer-gate-hv-1', { deletedAgoMs: 61_000 })], new Set());
    expect((await karpenterTerminate(n.port, 'hv-1', { retryMs: 1 })).done).toBe(true);
    const young = node([pod('drainer-gate-hv-1', { deletedAgoMs: 30_000 })], new Set());
    expect(
      (await karpenterTerminate(young.port, 'hv-1', { retryMs: 1, deadline: Date.now() + 30 })).done,
    ).toBe(false);
  });
});

describe("Cluster API's Machine drain", () => {
  it('waits for every pod but DaemonSet pods, evicting none that is already terminating', async () => {
    const n = node(
      [pod('agent', { owner: 'DaemonSet' }), pod('drainer-gate-hv-1', { deletedAgoMs: 120_000 }), pod('web')],
      new Set(),
    );
    const r = await capiDrain(n.port, 'hv-1', { retryMs: 1, nodeDrainTimeoutMs: 50 });
    // the gate pod held by its finalizer is waited for (CAPI has no minute's limit), never evicted
    expect(r.done).toBe(false);
    expect(n.evictions).toEqual(['web']);
    expect(n.left()).toEqual(['agent', 'drainer-gate-hv-1']);
  });

  it('is done once only DaemonSet pods are left', async () => {
    const n = node([pod('agent', { owner: 'DaemonSet' }), pod('web')], new Set());
    expect((await capiDrain(n.port, 'hv-1', { retryMs: 1, nodeDrainTimeoutMs: 5_000 })).done).toBe(true);
  });
});
