// Stories: agents share a budget of one slot on the sandbox API server. An agent opens its Lease
// watch at its first wait, as one watch without resourceVersion (the existing Leases come as its
// first events: no list), and keeps it: an agent that never waits opens none, a later wait opens
// nothing. The hand-off reaches the waiter through that watch, and it reads the queue (its label is
// the record's, here written by the test) once, when the slot is free. A Lease the watch has not
// shown yet costs a 409 on create and one GET of that Lease, never a list.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FleetBudget } from '../../src/core/fleet/budget.ts';
import { kubeFleetApi } from '../../src/core/fleet/kube-port.ts';
import type { FleetApi, Slot, SlotWait } from '../../src/core/fleet/types.ts';
import { QUEUED_LABEL } from '../../src/core/record/record.ts';
import { MERGE_PATCH } from '../../src/kube/http.ts';
import { node, startFixture, type KubeFixture } from '../kube/sandbox.ts';
import { until } from '../kube/helpers.ts';
import { quietLogger } from './fakes.ts';

describe('fleet budget over the API server', () => {
  let fx: KubeFixture | undefined;
  let stop = new AbortController();
  beforeEach(() => {
    stop = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    await fx?.close();
  });

  async function setup(nodes: string[]) {
    fx = await startFixture();
    const f = fx;
    await f.k.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'drainer' } },
    });
    for (const n of nodes) await f.k.request({ method: 'POST', path: '/api/v1/nodes', body: node(n) });
    const api = kubeFleetApi({ k: f.k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() });
    const agent = (over: Partial<FleetApi> = {}, o: { instance?: string; leaseDuration?: number } = {}) =>
      new FleetBudget({
        api: { ...api, ...over },
        budget: 1,
        leaseDuration: o.leaseDuration ?? 30,
        ...(o.instance ? { instance: o.instance } : {}),
        log: quietLogger(),
        signal: stop.signal,
      });
    const leaseReads = () =>
      f.server.requestLog.filter((r) => r.method === 'GET' && /\/leases(\?|$)/.test(r.path));
    // the record writes of phase Queued and Evacuating put the label on and take it off (here: the test)
    const label = async (n: string, since: number | null) =>
      void (await f.k.request({
        method: 'PATCH',
        path: `/api/v1/nodes/${n}`,
        contentType: MERGE_PATCH,
        body: { metadata: { labels: { [QUEUED_LABEL]: since === null ? null : String(since) } } },
      }));
    const wait = async (
      a: FleetBudget,
      n: string,
      since: number,
      waits: SlotWait[] = [],
      resume?: string,
    ) => {
      const slot = await a.acquire({
        node: n,
        queuedSince: new Date(since),
        signal: stop.signal,
        ...(resume ? { resume } : {}),
        enqueue: () => label(n, since),
        onWait: (w) => waits.push(w),
      });
      await label(n, null);
      return slot;
    };
    // read in the server's store: the test's own reads stay out of the request log
    const holder = () =>
      (
        f.server.store.get('leases.coordination.k8s.io', 'drainer', 'drainer-evacuation-0') as {
          spec?: { holderIdentity?: string };
        }
      ).spec?.holderIdentity;
    return { f, agent, leaseReads, wait, holder };
  }

  it("the holder names the instance: a rollout's new agent re-takes its node's slot, and the old one learns it lost it", async () => {
    const { agent, wait, holder } = await setup(['n1']);
    const old = agent({}, { instance: 'drainer-old/uid-1', leaseDuration: 0.3 });
    const fresh = agent({}, { instance: 'drainer-new/uid-2', leaseDuration: 0.3 });

    const first = await wait(old, 'n1', 1000);
    expect(holder()).toBe('n1/drainer-old/uid-1');
    // the new pod of the same node resumes: the slot its record names is its node's, so it takes it at once
    const second = await wait(fresh, 'n1', 1000, [], 'drainer-evacuation-0');
    expect(holder()).toBe('n1/drainer-new/uid-2');
    // the old pod's next renewal finds another holder: it has lost the slot (not both believing they hold it)
    await until(() => first?.lost.aborted === true, 'old lost the slot');
    expect(second?.lost.aborted).toBe(false);
    first?.abandon();
    second?.abandon();
  });

  it('opens the Lease watch at the first wait (one watch, no list); an idle agent and a second wait open none', async () => {
    const { f, agent, leaseReads, wait, holder } = await setup(['n1', 'n2', 'n3']);
    const [a1, a2] = [agent(), agent()];
    agent(); // n3's agent never waits
    expect(leaseReads()).toEqual([]);

    // n1's first wait: one request, a watch without resourceVersion, and the slot
    const first = await wait(a1, 'n1', 1000);
    expect(leaseReads().map((r) => r.path)).toEqual([expect.stringContaining('watch=1')]);
    expect(leaseReads()[0]?.path).not.toContain('resourceVersion=');

    // n2 waits through the hand-off: its own first watch, told of the release by it
    const waits: SlotWait[] = [];
    const second: Promise<Slot | undefined> = wait(a2, 'n2', 2000, waits);
    await until(() => waits.length > 0, 'n2 waits');
    expect(waits[0]).toMatchObject({ total: 1, holders: [{ node: 'n1', slot: 'drainer-evacuation-0' }] });
    await first?.release();
    const slot = await second;
    expect(slot?.name).toBe('drainer-evacuation-0');
    expect(holder()).toBe('n2');
    expect(leaseReads()).toHaveLength(2);

    // n1's second wait (n2 holds the slot): no list, no watch
    const again2: SlotWait[] = [];
    const again: Promise<Slot | undefined> = wait(a1, 'n1', 3000, again2);
    await until(() => again2.length > 0, 'n1 waits again');
    expect(again2[0]).toMatchObject({ holders: [{ node: 'n2' }] });
    await slot?.release();
    const back = await again;
    expect(back?.name).toBe('drainer-evacuation-0');
    expect(holder()).toBe('n1');
    expect(leaseReads()).toHaveLength(2);
    expect(leaseReads().every((r) => r.path.includes('watch=1'))).toBe(true);
    // no race lost: no 409, no Lease read by name; the budget writes no label itself (the test's
    // label on and off per wait are the only Node writes)
    expect(f.server.requestLog.filter((r) => r.status === 409)).toEqual([]);
    expect(f.server.requestLog.filter((r) => r.method === 'GET' && /\/leases\/./.test(r.path))).toEqual([]);
    expect(f.server.requestLog.filter((r) => r.method === 'PATCH')).toHaveLength(6);
    back?.abandon();
  }, 20_000);

  it('a Lease its watch had not shown: the create answers 409, one GET shows the holder, and it waits for the hand-off', async () => {
    const { f, agent, wait, holder } = await setup(['n1', 'n2']);
    const first = await wait(agent(), 'n1', 1000);
    // n2's watch misses the existing Lease among its first events (no marker ends them)
    let missed = false;
    const blind = agent({
      watchLeases: (onEvent, onOpen, signal) =>
        kubeFleetApi({ k: f.k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() }).watchLeases(
          (type, l) => {
            if (!missed && type === 'ADDED') missed = true;
            else onEvent(type, l);
          },
          onOpen,
          signal,
        ),
    });
    const waits: SlotWait[] = [];
    const second: Promise<Slot | undefined> = wait(blind, 'n2', 2000, waits);
    await until(() => waits.length > 0, 'n2 waits');
    expect(missed).toBe(true);
    // it took the slot for free, tried to create it, and read that one Lease: held by n1
    expect(waits[0]).toMatchObject({ holders: [{ node: 'n1' }] });
    const conflicts = f.server.requestLog.filter((r) => r.status === 409);
    expect(conflicts.map((r) => r.method)).toEqual(['POST']);
    const gets = f.server.requestLog.filter((r) => r.method === 'GET' && /\/leases\/./.test(r.path));
    expect(gets).toHaveLength(1);

    await first?.release();
    const slot = await second;
    expect(slot?.name).toBe('drainer-evacuation-0');
    expect(holder()).toBe('n2');
    const lists = f.server.requestLog.filter(
      (r) => r.method === 'GET' && /\/leases(\?|$)/.test(r.path) && !r.path.includes('watch=1'),
    );
    expect(lists).toEqual([]);
    slot?.abandon();
  }, 20_000);
});
