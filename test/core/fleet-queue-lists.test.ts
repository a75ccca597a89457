// Story: a rack of three, budget 1, and evacuations that take longer than the slot Leases' duration
// (as real ones do: minutes, against 30 s). The last node waits through two hand-offs. It lists the
// queue once, at its first chance at a slot, and learns of the second hand-off from its Lease watch:
// the holders renewing meanwhile, and the wake-ups to check whether one of them stopped, cost it no
// list (issue 38: a wait's wake-up on a timer relisted the queue at the next hand-off).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NODE_LEASE_COMPONENT, nodeLeaseName } from '../../src/core/agent/node-lease.ts';
import { FleetBudget } from '../../src/core/fleet/budget.ts';
import { kubeFleetApi } from '../../src/core/fleet/kube-port.ts';
import type { FleetApi, Slot } from '../../src/core/fleet/types.ts';
import { queueNode, startFleetFixture, type KubeFixture } from '../kube/sandbox.ts';
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

/** One agent's budget over its own port, counting its queue lists. */
function agent(lists: { n: number }) {
  const api = kubeFleetApi({ k: fx.k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() });
  const counting: FleetApi = {
    ...api,
    queuedNodes: () => {
      lists.n++;
      return api.queuedNodes();
    },
  };
  return new FleetBudget({
    api: counting,
    budget: 1,
    leaseDuration: 1.5,
    log: quietLogger(),
    signal: stop.signal,
  });
}

const queue = (n: string, since: number) => queueNode(fx, n, since);

const acquire = (b: FleetBudget, n: string, since: number) =>
  b.acquire({
    node: n,
    queuedSince: new Date(since),
    signal: stop.signal,
    enqueue: () => queue(n, since),
    onWait: () => undefined,
  });

describe('a node waiting through two hand-offs longer than the lease duration', () => {
  it('lists the queue once', async () => {
    const n3Lists = { n: 0 };
    const first = await acquire(agent({ n: 0 }), 'n1', 1000);
    let second: Slot | undefined;
    let third: Slot | undefined;
    const n2 = acquire(agent({ n: 0 }), 'n2', 2000).then((s) => (second = s));
    const n3 = acquire(agent(n3Lists), 'n3', 3000).then((s) => (third = s));

    await sleep(2500); // n1 evacuates longer than a lease duration, renewing its slot
    await first!.release();
    await n2;
    expect(third).toBeUndefined();
    expect(n3Lists.n).toBe(1);

    await sleep(2500); // and n2 as long
    await second!.release();
    await n3;
    third!.abandon();
    expect(n3Lists.n).toBe(1);
  }, 20_000);
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
    await nodeLeases.replaceLease({ ...renewed, renewTime: new Date().toISOString() });
    await slots.createLease({ name: 'drainer-evacuation-0', holder: 'n2', durationSeconds: 30 });
    await until(() => seen.includes('drainer-evacuation-0'));
    expect(seen).toEqual(['drainer-evacuation-0']);
  });
});

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await sleep(50);
}
