// The gates of deleted nodes are removed by the agent whose turn it is to sweep (one a period, the
// fleet's Lease drainer-gate-sweep says whose): a sweep lists every gate once, and the live nodes'
// gates stay.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/errors.ts';
import { GATE_FINALIZER, gateName } from '../../src/kube/gate.ts';
import { sweepGateLitter } from '../../src/core/gate/litter.ts';
import { kubeGateApi } from '../../src/core/gate/kube-port.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { node, startFixture, type KubeFixture } from '../kube/sandbox.ts';

const log = createLogger({ level: 'silent' });
const NS = 'drainer';
const PDBS = `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const gates = (...nodes: string[]) => nodes.map(gateName).sort();

describe('gate litter of deleted nodes', () => {
  let fx: KubeFixture;
  const names = async (path: string) =>
    (await fx.k.request<{ items: KubeObject[] }>({ path })).items.map((o) => o.metadata.name).sort();
  const sweep = (nodeName: string) => sweepGateLitter({ k: fx.k, namespace: NS, nodeName, log });

  beforeEach(async () => {
    fx = await startFixture();
    await fx.k.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } });
    const gates = kubeGateApi({ k: fx.k, namespace: NS, daemonSet: 'drainer', image: 'pause', log });
    // every node had a gate (its pod with the finalizer); b, d and f have been deleted since
    for (const n of ['a', 'b', 'c', 'd', 'e', 'f']) await gates.hold(n);
    for (const n of ['a', 'c', 'e'])
      await fx.k.request({ method: 'POST', path: '/api/v1/nodes', body: node(n) });
  });
  afterEach(async () => fx.close());

  it("one sweep removes every deleted node's gate, its pods' finalizers dropped, and keeps the live ones'", async () => {
    expect(await sweep('a')).toEqual(['b', 'd', 'f']);
    expect(await names(PDBS)).toEqual(gates('a', 'c', 'e'));
    expect(await names(PODS)).toEqual(gates('a', 'c', 'e'));
  });

  it('a 409 on the finalizer patch is not "gone": the pod loses its finalizer, and the PDB goes only after it', async () => {
    let conflicts = 1;
    const k = new Proxy(fx.k, {
      get(target, prop, receiver) {
        if (prop !== 'request') return Reflect.get(target, prop, receiver) as unknown;
        return (r: { method?: string; path: string }) =>
          r.method === 'PATCH' && r.path.startsWith(PODS) && conflicts-- > 0
            ? Promise.reject(
                new ConflictError('the object has been modified', { api: 'kubernetes', status: 409 }),
              )
            : target.request(r as Parameters<typeof target.request>[0]);
      },
    });
    expect(await sweepGateLitter({ k, namespace: NS, nodeName: 'a', log })).toEqual(['b', 'd', 'f']);
    const pods = await names(PODS);
    expect(pods.filter((n) => n?.startsWith(gateName('b')))).toEqual([]);
  });

  it('a gate pod that keeps its finalizer keeps its PDB too: the next sweep finds it again', async () => {
    const k = new Proxy(fx.k, {
      get(target, prop, receiver) {
        if (prop !== 'request') return Reflect.get(target, prop, receiver) as unknown;
        return (r: { method?: string; path: string }) =>
          r.method === 'PATCH' && r.path.startsWith(PODS)
            ? Promise.reject(
                new ConflictError('the object has been modified', { api: 'kubernetes', status: 409 }),
              )
            : target.request(r as Parameters<typeof target.request>[0]);
      },
    });
    await sweepGateLitter({ k, namespace: NS, nodeName: 'a', log }).catch(() => undefined);
    expect(await names(PDBS)).toEqual(gates('a', 'b', 'c', 'd', 'e', 'f'));
    expect(await sweep('a')).toEqual(['b', 'd', 'f']);
    expect((await names(PODS)).filter((n) => n?.startsWith(gateName('b')))).toEqual([]);
  });

  it('a deleted node whose gate an older drainer made (drainer-gate-<node>) is swept too', async () => {
    const labels = { 'app.kubernetes.io/component': 'drain-gate', 'drainer.dev/gate-node': 'g' };
    await fx.k.request({
      method: 'POST',
      path: PDBS,
      body: {
        metadata: { name: 'drainer-gate-g', labels },
        spec: { minAvailable: 1, selector: { matchLabels: labels } },
      },
    });
    await fx.k.request({
      method: 'POST',
      path: PODS,
      body: {
        metadata: { name: 'drainer-gate-g', labels, finalizers: [GATE_FINALIZER] },
        spec: { nodeName: 'g', containers: [{ name: 'gate', image: 'pause' }] },
      },
    });
    expect(await sweep('e')).toEqual(['b', 'd', 'f', 'g']);
    expect(await names(PDBS)).toEqual(gates('a', 'c', 'e'));
    expect((await names(PODS)).filter((n) => n?.startsWith('drainer-gate-g'))).toEqual([]);
  });

  it('a second sweep has nothing left to remove', async () => {
    await sweep('a');
    expect(await sweep('a')).toEqual([]);
  });
});
