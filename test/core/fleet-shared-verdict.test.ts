// Story: ten agents need the Prometheus verdict at the same moment, over the sandbox API server.
// One of them asks Prometheus and shares the answer on the drainer-blockers Lease; the others read
// it from their Lease watch. Within the interval nobody asks again; after it, one does. An answer
// that is an error is shared as one (and holds every node).
import { afterEach, describe, expect, it } from 'vitest';
import { kubeFleetApi } from '../../src/core/fleet/kube-port.ts';
import { LeaseCache } from '../../src/core/fleet/lease-cache.ts';
import { BLOCKERS_LEASE, SharedVerdict } from '../../src/core/fleet/shared-verdict.ts';
import { startFixture, type KubeFixture } from '../kube/sandbox.ts';
import { until } from '../kube/helpers.ts';
import { quietLogger } from './fakes.ts';

describe('the shared Prometheus verdict', () => {
  let fx: KubeFixture | undefined;
  const stop = new AbortController();
  afterEach(async () => {
    stop.abort();
    await fx?.close();
  });

  it('ten agents at once: one query per interval for all of them, and the same answer', async () => {
    fx = await startFixture();
    const f = fx;
    await f.k.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'drainer' } },
    });
    let now = Date.parse('2026-11-27T10:00:00Z');
    let answer: () => Promise<string[]> = () => Promise.resolve(['CephHealthWarning']);
    let asked = 0;
    const agents = Array.from({ length: 10 }, (_, i) => {
      const api = kubeFleetApi({ k: f.k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() });
      return new SharedVerdict({
        api,
        cache: new LeaseCache(api, stop.signal),
        identity: `blocker-check/node-${i}`,
        intervalMs: 60_000,
        ask: () => {
          asked++;
          return answer();
        },
        now: () => new Date(now),
        log: quietLogger(),
        settleMs: 5_000,
      });
    });
    const all = () => Promise.all(agents.map((a) => a.get(stop.signal)));

    const first = await all();
    expect(asked).toBe(1);
    expect(first.map((v) => v.firing)).toEqual(Array(10).fill(['CephHealthWarning']));
    const writes = () =>
      f.server.requestLog.filter((r) => r.method !== 'GET' && r.path.includes(`/leases`)).length;
    const written = writes();

    now += 30_000; // within the interval: read from the watch, no request, no query
    answer = () => Promise.resolve([]);
    expect((await all()).every((v) => v.firing.length === 1)).toBe(true);
    expect(asked).toBe(1);
    expect(writes()).toBe(written);

    now += 31_000; // past it: one of them asks again, the others take its answer
    expect((await agents[3]?.get(stop.signal))?.firing).toEqual([]);
    // the others have it as soon as their watch brings the Lease (a lagging one keeps the last answer)
    const fresh = async () => (await all()).every((v) => v.firing.length === 0);
    await until(fresh, 'every agent has the new verdict');
    expect(asked).toBe(2);

    now += 61_000; // Prometheus cannot answer: every agent sees the error (which holds)
    answer = () => Promise.reject(new Error('http://p:9090/api/v1/alerts unreachable: connect ECONNREFUSED'));
    const failed = async () => (await all()).every((v) => v.error !== undefined);
    await until(failed, 'every agent has the error');
    expect(asked).toBe(3);
    expect((await all()).map((v) => v.error)).toEqual(
      Array(10).fill('http://p:9090/api/v1/alerts unreachable: connect ECONNREFUSED'),
    );
    const lease = await f.k.request<{ spec?: { holderIdentity?: string } }>({
      path: `/apis/coordination.k8s.io/v1/namespaces/drainer/leases/${BLOCKERS_LEASE}`,
    });
    expect(lease.spec?.holderIdentity).toMatch(/^blocker-check\/node-\d$/);
  }, 30_000);
});
