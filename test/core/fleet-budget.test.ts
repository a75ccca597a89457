// Story: two agents share a budget of one slot on the sandbox API server. Each opens its Lease
// watch when it starts; from then on a wait costs no Lease watch of its own (and a Lease list only
// after a lost race): the hand-off reaches the waiter through that watch, and it reads the queue (its label is the record's, here
// written by the test) once, when the slot is free.
import { afterEach, describe, expect, it } from 'vitest';
import { FleetBudget } from '../../src/core/fleet/budget.ts';
import { kubeFleetApi } from '../../src/core/fleet/kube-port.ts';
import type { Slot, SlotWait } from '../../src/core/fleet/types.ts';
import { QUEUED_LABEL } from '../../src/core/record.ts';
import { MERGE_PATCH } from '../../src/kube/http.ts';
import { node, startFixture, type KubeFixture } from '../kube/sandbox.ts';
import { until } from '../kube/helpers.ts';
import { quietLogger } from './fakes.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases';

describe('fleet budget over the API server', () => {
  let fx: KubeFixture | undefined;
  const stop = new AbortController();
  afterEach(async () => {
    stop.abort();
    await fx?.close();
  });

  it('opens one Lease watch per agent at start; a wait through a hand-off opens none and lists Leases only after a lost race', async () => {
    fx = await startFixture();
    const f = fx;
    await f.k.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'drainer' } },
    });
    for (const n of ['n1', 'n2']) await f.k.request({ method: 'POST', path: '/api/v1/nodes', body: node(n) });
    const agent = () =>
      new FleetBudget({
        api: kubeFleetApi({ k: f.k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() }),
        budget: 1,
        leaseDuration: 30,
        log: quietLogger(),
        signal: stop.signal,
      });
    const [a1, a2] = [agent(), agent()];
    const leaseReads = () =>
      f.server.requestLog.filter((r) => r.method === 'GET' && /\/leases(\?|$)/.test(r.path));
    await until(() => leaseReads().filter((r) => r.path.includes('watch=1')).length === 2, 'both watches');
    const opened = leaseReads().length;
    // the record write of phase Queued puts the label on (here: the test does it)
    const enqueue = (n: string, since: number) => async () =>
      void (await f.k.request({
        method: 'PATCH',
        path: `/api/v1/nodes/${n}`,
        contentType: MERGE_PATCH,
        body: { metadata: { labels: { [QUEUED_LABEL]: String(since) } } },
      }));

    const first = await a1.acquire({
      node: 'n1',
      queuedSince: new Date(1000),
      signal: stop.signal,
      enqueue: enqueue('n1', 1000),
      onWait: () => undefined,
    });
    const waits: SlotWait[] = [];
    const second: Promise<Slot | undefined> = a2.acquire({
      node: 'n2',
      queuedSince: new Date(2000),
      signal: stop.signal,
      enqueue: enqueue('n2', 2000),
      onWait: (w) => waits.push(w),
    });
    await until(() => waits.length > 0, 'n2 waits');
    expect(waits[0]).toMatchObject({ total: 1, holders: [{ node: 'n1', slot: 'drainer-evacuation-0' }] });
    await first?.release();
    const slot = await second;

    expect(slot?.name).toBe('drainer-evacuation-0');
    const lease = await f.k.request<{ spec: { holderIdentity?: string } }>({
      path: `${LEASES}/drainer-evacuation-0`,
    });
    expect(lease.spec.holderIdentity).toBe('n2');
    // no watch of its own, and a list of the Leases only after a lost race (a 409: read the API's own view)
    const later = leaseReads().slice(opened);
    expect(later.filter((r) => r.path.includes('watch=1'))).toEqual([]);
    const conflicts = f.server.requestLog.filter((r) => r.status === 409);
    expect(later.length).toBeLessThanOrEqual(conflicts.length);
    // the queue is read once per node that found the slot free; the budget writes no label itself
    const queueReads = f.server.requestLog.filter((r) => r.path.includes('labelSelector=drainer.dev'));
    expect(queueReads).toHaveLength(2);
    const nodePatches = f.server.requestLog.filter((r) => r.method === 'PATCH');
    expect(nodePatches).toHaveLength(2);
    slot?.abandon();
  }, 20_000);
});
