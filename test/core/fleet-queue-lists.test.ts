// Story: a rack of three, budget 1, and evacuations that take longer than the slot Leases' duration
// (as real ones do: minutes, against 30 s). The last node waits through two hand-offs. It lists the
// queue at its first chance at a slot, and learns of the second hand-off from its Lease watch: the
// holders renewing meanwhile, and the wake-ups to check whether one of them stopped, cost it no list
// (issue 38: a wait's wake-up on a timer relisted the queue at the next hand-off). It reads it again
// before it takes the slot only when a node said it came back in its old place (queue-return.ts):
// reading it before every take cost two requests per queued node (issue 51). A node that finds the
// slot free when it queues reads the queue in one request (a page from etcd); one that first reads
// at a hand-off, or comes back in its old place, begins with the nodes queued just before it, as
// deep in a roll's long queue.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE_LEASE_COMPONENT, nodeLeaseName } from '../../src/core/agent/node-lease.ts';
import { FleetBudget, microTime } from '../../src/core/fleet/budget.ts';
import { kubeFleetApi } from '../../src/core/fleet/kube-port.ts';
import type { FleetApi, Slot, SlotWait } from '../../src/core/fleet/types.ts';
import { waitText } from '../../src/core/fleet/step.ts';
import { announceReturn, RETURN_LEASE } from '../../src/core/fleet/queue-return.ts';
import { node, queueNode, queueReadsSince, startFleetFixture, type KubeFixture } from '../kube/sandbox.ts';
import { quietLogger } from './fakes.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let fx: KubeFixture;
let stop: AbortController;
beforeEach(async () => {
  stop = new AbortController();
  fx = await startFleetFixture(['n1', 'n2', 'n3']);
});
afterEach(async () => {
  stop.abort();
  await fx.close();
});

interface Read {
  want?: number;
  got: number;
  more: boolean;
}

/** One agent's budget over its own port, counting its queue lists (and what each read). */
function agent(lists: { n: number; reads?: Read[] }, queuePage?: number) {
  const api = kubeFleetApi({ k: fx.k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() });
  const counting: FleetApi = {
    ...api,
    queuedAhead: async (o) => {
      lists.n++;
      const r = await api.queuedAhead(o);
      lists.reads?.push({
        ...(o.want !== undefined ? { want: o.want } : {}),
        got: r.nodes.length,
        more: r.more,
      });
      return r;
    },
  };
  return new FleetBudget({
    api: counting,
    budget: 1,
    leaseDuration: 1.5,
    ...(queuePage ? { queuePage } : {}),
    log: quietLogger(),
    signal: stop.signal,
  });
}

const queue = (n: string, since: number) => queueNode(fx, n, since);
const unqueue = (n: string) =>
  fx.k.request({
    method: 'PATCH',
    path: `/api/v1/nodes/${n}`,
    contentType: 'application/merge-patch+json',
    body: { metadata: { labels: { 'drainer.dev/queued': null } } },
  });

const acquire = (
  b: FleetBudget,
  n: string,
  since: number,
  onWait: (w: SlotWait) => void = () => undefined,
  returning = false,
) =>
  b.acquire({
    node: n,
    queuedSince: new Date(since),
    signal: stop.signal,
    enqueue: () => queue(n, since),
    returning,
    onWait,
  });

describe('a node waiting through two hand-offs longer than the lease duration', () => {
  it('lists the queue once, and takes its turn on that list when no node came back', async () => {
    const n3Lists = { n: 0 };
    const first = await acquire(agent({ n: 0 }), 'n1', 1000);
    await unqueue('n1'); // the record's phase Evacuating takes the label off
    let second: Slot | undefined;
    let third: Slot | undefined;
    const n2 = acquire(agent({ n: 0 }), 'n2', 2000).then((s) => (second = s));
    const n3 = acquire(agent(n3Lists), 'n3', 3000).then((s) => (third = s));

    await sleep(2500); // n1 evacuates longer than a lease duration, renewing its slot
    await first!.release();
    await n2;
    await unqueue('n2');
    expect(third).toBeUndefined();
    expect(n3Lists.n).toBeLessThanOrEqual(1);

    await sleep(2500); // and n2 as long
    await second!.release();
    await n3;
    third!.abandon();
    expect(n3Lists.n).toBe(1);
  }, 20_000);
});

describe('a node that comes back to the queue in its old place', () => {
  it('goes before a waiter that listed the queue while it was out of it', async () => {
    const n3Lists = { n: 0 };
    // n2 queued first and took the slot; n1 and n3 queue behind it
    const refused = await acquire(agent({ n: 0 }), 'n2', 2000);
    await unqueue('n2'); // the record's phase Evacuating takes the label off
    let first: Slot | undefined;
    let third: Slot | undefined;
    const n1 = acquire(agent({ n: 0 }), 'n1', 1000).then((s) => (first = s));
    const n3 = acquire(agent(n3Lists), 'n3', 3000).then((s) => (third = s));
    await sleep(200);
    // n2's attempt is refused (a blocker, capacity): it gives the slot back, out of the queue
    await refused!.release();
    await n1;
    await unqueue('n1');
    await until(() => n3Lists.n > 0); // n3 read the queue while n2 was out of it
    // n2 tries again at the next resync: the same evacuation keeps its place, ahead of n3, and
    // says so on the queue's return Lease (its agent knows: a retry)
    let second: Slot | undefined;
    const n2 = acquire(agent({ n: 0 }), 'n2', 2000, undefined, true).then((s) => (second = s));
    await sleep(200);
    await first!.release();
    await Promise.race([n2, n3]);
    expect(third).toBeUndefined();
    expect(second?.name).toBe('drainer-evacuation-0');

    await second!.release();
    await n3;
    third!.abandon();
  }, 20_000);
});

describe('a node that comes back while a waiter reads the queue', () => {
  it('is seen: the waiter whose list answered after the word of its return reads the queue again', async () => {
    const held = await acquire(agent({ n: 0 }), 'n1', 1000);
    await unqueue('n1');
    // n3 waits alone; n2 (queued before it) was refused and is out of the queue
    const api = kubeFleetApi({ k: fx.k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() });
    let lists = 0;
    const n3Budget = new FleetBudget({
      api: {
        ...api,
        queuedAhead: async (o) => {
          const read = await api.queuedAhead(o);
          // n3's list was read without n2; before its answer arrives, n2's retry writes its label
          // back (its old place) and the word of its return, which n3's Lease watch brings
          if (++lists === 1) {
            await queue('n2', 2000);
            await announceReturn(api, await api.getLease(RETURN_LEASE), {
              node: 'n2',
              place: 2000,
              now: new Date(),
            });
            await sleep(300);
          }
          return read;
        },
      },
      budget: 1,
      leaseDuration: 1.5,
      log: quietLogger(),
      signal: stop.signal,
    });
    let third: Slot | undefined;
    const n3 = acquire(n3Budget, 'n3', 3000).then((s) => (third = s));
    await sleep(200);
    await held!.release();
    await until(() => lists > 1 || third !== undefined);
    expect(third).toBeUndefined();
    // n2 goes on, in its place; its own word of return is no reason to read the queue again
    const n2Lists = { n: 0 };
    const second = await acquire(agent(n2Lists), 'n2', 2000, undefined, true);
    expect(second?.name).toBe('drainer-evacuation-0');
    expect(n2Lists.n).toBe(1);
    await unqueue('n2');
    await second!.release();
    await n3;
    third!.abandon();
  }, 20_000);
});

describe('a node deep in a long queue', () => {
  it('reads the page queued just before it, then the rest once they have gone, and goes in its turn', async () => {
    const rack = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8'];
    for (const n of rack.slice(3))
      await fx.k.request({ method: 'POST', path: '/api/v1/nodes', body: node(n) });
    // the rack is cordoned in order: every node is in the queue before any agent looks at it
    for (const [i, n] of rack.entries()) await queue(n, (i + 1) * 1000);
    const last = { n: 0, reads: [] as Read[] };
    const order: string[] = [];
    const waits: string[] = [];

    await Promise.all(
      rack.map(async (n, i) => {
        const told = n === 'n8' ? (w: SlotWait) => waits.push(waitText(w)) : undefined;
        const slot = await acquire(agent(n === 'n8' ? last : { n: 0 }, 2), n, (i + 1) * 1000, told);
        order.push(n);
        await unqueue(n); // the record's phase Evacuating takes the label off
        await sleep(100); // its evacuation
        await slot!.release();
      }),
    );

    expect(order).toEqual(rack);
    // a page (of 2 here): more than 2 of the nodes queued just before it (n5, n6, n7, within 4 s), so
    // it waits; it reads the rest once they have gone, and finds nobody left ahead
    expect(last.reads).toEqual([
      { want: 2, got: 3, more: true },
      { got: 0, more: false },
    ]);
  }, 20_000);
});

/**
 * n1 and n2 were queued a moment before (their agents are on their way to the slot, or were held at
 * the start gate with n3 and go on with it); n3 finds the slot free. Its queue reads until it waits.
 */
async function n3BehindTwo(returning: boolean) {
  await queue('n1', 1000);
  await queue('n2', 2000);
  const from = fx.server.requestLog.length;
  await new Promise<void>((told) => void acquire(agent({ n: 0 }), 'n3', 3000, () => told(), returning));
  return queueReadsSince(fx, from);
}

describe('a node that finds the slot free when it queues', () => {
  it('reads the queue with one request when it is a page or shorter: the page from etcd', async () => {
    expect(await n3BehindTwo(false)).toEqual([
      { selector: 'drainer.dev/queued<3001', cached: false, limit: '52' },
    ]);
  });
});

describe('a node back in its old place that finds the slot free', () => {
  it('reads the nodes queued just before it first: the start gate lets a whole queue go at once', async () => {
    expect((await n3BehindTwo(true)).map((r) => [r.selector, r.cached])).toEqual([
      ['drainer.dev/queued>2000,drainer.dev/queued<3001', true],
      ['drainer.dev/queued<3001', false],
    ]);
  });
});

describe('a node that queued while every slot was held', () => {
  it('reads the nodes queued just before it first, at the hand-off, as a node deep in a long queue must', async () => {
    const held = await acquire(agent({ n: 0 }), 'n1', 1000);
    await unqueue('n1');
    await queue('n2', 2000);
    const waits: SlotWait[] = [];
    void acquire(agent({ n: 0 }), 'n3', 3000, (w) => waits.push(w));
    await until(() => waits.length > 0); // it waits for the slot n1 holds, having read nothing
    const from = fx.server.requestLog.length;

    await held!.release();
    await until(() => waits.length > 1); // the hand-off: it reads the queue, and waits behind n2

    expect(queueReadsSince(fx, from).map((r) => [r.selector, r.cached])).toEqual([
      ['drainer.dev/queued>2000,drainer.dev/queued<3001', true],
      ['drainer.dev/queued<3001', false],
    ]);
  });
});

describe("a waiter's Lease watch", () => {
  it("brings the slots, never the agents' node Leases, whose renewals would reach every waiter", async () => {
    const nodeLeases = kubeFleetApi({
      k: fx.k,
      namespace: 'drainer',
      daemonSet: 'drainer',
      log: quietLogger(),
      component: NODE_LEASE_COMPONENT,
    });
    const slots = kubeFleetApi({ k: fx.k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() });
    const seen: string[] = [];
    slots.watchLeases(
      (_type, l) => seen.push(l.name),
      () => undefined,
      stop.signal,
    );
    const renewed = await nodeLeases.createLease({
      name: nodeLeaseName('n1'),
      holder: 'agent-n1',
      durationSeconds: 300,
    });
    await nodeLeases.replaceLease({ ...renewed, renewTime: microTime(new Date()) });
    await slots.createLease({ name: 'drainer-evacuation-0', holder: 'n2', durationSeconds: 30 });
    await until(() => seen.includes('drainer-evacuation-0'));
    expect(seen).toEqual(['drainer-evacuation-0']);
  });
});

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await sleep(50);
}
