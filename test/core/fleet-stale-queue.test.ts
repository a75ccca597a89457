// Stories: a waiter may go before the nodes ahead of it only when a slot was left free for a lease
// duration while they did not take it (they are taken for gone). When a node ahead takes a slot the
// queue moves, and the nodes still ahead get a full lease duration of a free slot again: a free slot
// seen earlier, before the queue moved, does not count (chaos seeds 2 and 3: the soak's
// queue-out-of-order rule judges each slot from when it was given back).
import { describe, expect, it } from 'vitest';
import { FleetBudget, microTime } from '../../src/core/fleet/budget.ts';
import type { Slot } from '../../src/core/fleet/types.ts';
import { MERGE_PATCH } from '../../src/kube/http.ts';
import { queueNode } from '../kube/sandbox.ts';
import { quietLogger } from './fakes.ts';
import { fleetWorld } from './fleet-world.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/drainer/leases';

const world = fleetWorld(['quiet', 'early', 'late']);
const { held, holderOf } = world;

/** Another node's agent takes a slot Lease (its write, as the API server sees it). */
const take = (slot: string, node: string) =>
  world.fx.k.request({
    method: 'POST',
    path: LEASES,
    body: {
      metadata: { name: slot },
      spec: { holderIdentity: node, leaseDurationSeconds: 30, renewTime: microTime(new Date()) },
    },
  });
const giveBack = (slot: string) => world.fx.k.request({ method: 'DELETE', path: `${LEASES}/${slot}` });
const unqueue = (n: string) =>
  world.fx.k.request({
    method: 'PATCH',
    path: `/api/v1/nodes/${n}`,
    contentType: MERGE_PATCH,
    body: { metadata: { labels: { 'drainer.dev/queued': null } } },
  });

describe('the stale jump of a waiter over the nodes ahead', () => {
  it('starts its lease duration again when a node ahead takes a slot: the queue moves', async () => {
    // two slots: "busy" evacuates on slot 1; "quiet" queued first and never takes a slot; then
    // "early"; then "late", whose agent is the one under test, on its own monotonic time
    await take('drainer-evacuation-1', 'busy');
    await queueNode(world.fx, 'quiet', 1000);
    await queueNode(world.fx, 'early', 2000);
    let mono = 0;
    const late = new FleetBudget({
      api: world.api(),
      budget: 2,
      leaseDuration: 30,
      log: quietLogger(),
      signal: world.stop.signal,
      monotonic: () => mono,
    });
    let got: Slot | undefined;
    const waiting = late
      .acquire({
        node: 'late',
        queuedSince: new Date(3000),
        signal: world.stop.signal,
        enqueue: () => queueNode(world.fx, 'late', 3000),
        onWait: () => undefined,
      })
      .then((s) => (got = s));
    await sleep(300); // slot 0 free, two nodes ahead: late waits

    mono += 20_000;
    await giveBack('drainer-evacuation-1'); // busy is done
    await take('drainer-evacuation-0', 'early'); // early, ahead of late, takes a slot: the queue moves
    await unqueue('early');
    await sleep(300);

    mono += 11_000; // 31 s since late first saw a free slot, 11 s since slot 1 was given back
    await take('wake-1', 'someone-else');
    await sleep(300);
    expect(got).toBeUndefined();
    expect(holderOf('drainer-evacuation-1')).toBeUndefined();

    mono += 20_000; // slot 1 left free for a lease duration and quiet never took it: quiet is gone
    await take('wake-2', 'someone-else');
    await waiting;
    held.push(got!);
    expect(holderOf('drainer-evacuation-1')).toBe('late');
  }, 15_000);
});
