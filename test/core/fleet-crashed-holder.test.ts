// Story: n1's agent is killed (kill -9) while it holds the only fleet slot in the middle of an
// evacuation. Nova goes on with the migrations it started, so n1 is still evacuating: its slot
// stops being renewed, but n2, next in the queue, must not take it while n1's record says
// Evacuating on that slot and n1's agent may come back. n2 takes it once the agent is known gone:
// its agent Lease drainer-node-n1 unchanged for fleet.agentLeaseDuration, or its pod gone. The
// restarted agent takes its own slot back at once; a slot given back normally costs n2 no look.
import { describe, expect, it } from 'vitest';
import { NODE_LEASE_COMPONENT, nodeLeaseName } from '../../src/core/agent/node-lease.ts';
import { FleetBudget, microTime } from '../../src/core/fleet/budget.ts';
import type { LeaseView, Slot } from '../../src/core/fleet/types.ts';
import { newRecord, serializeRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { queueNode } from '../kube/sandbox.ts';
import { until } from '../kube/helpers.ts';
import { quietLogger } from './fakes.ts';
import { fleetWorld } from './fleet-world.ts';

const SLOT = 'drainer-evacuation-0';

const world = fleetWorld(['n1', 'n2']);
const { held } = world;

/** Our own clock, moved by the test: a slot or agent Lease runs out only when the test says. */
let clock = 0;
/** How often the waiter read it: each turn of its loop reads it. */
let reads = 0;
const slots = () => world.api();
const agentLeases = () => world.api(NODE_LEASE_COMPONENT);

/** An agent's budget: slots of 3 s, agents of 6 s, a loop that looks again every few ms. */
function agent(instance: string): FleetBudget {
  return new FleetBudget({
    api: slots(),
    budget: 1,
    leaseDuration: 3,
    agentLeaseDuration: 6,
    resyncMs: 20,
    instance,
    log: quietLogger(),
    signal: world.stop.signal,
    monotonic: () => {
      reads++;
      return clock;
    },
  });
}

/** `resume`: the slot the node's record says it evacuates on (a restarted agent resumes it). */
const acquire = (b: FleetBudget, n: string, since: number, enqueued: string[] = [], resume?: string) =>
  b
    .acquire({
      node: n,
      queuedSince: new Date(since),
      signal: world.stop.signal,
      enqueue: async () => {
        enqueued.push(n);
        await queueNode(world.fx, n, since);
      },
      ...(resume ? { resume } : {}),
      onWait: () => undefined,
    })
    .then((s) => {
      if (s) held.push(s);
      return s;
    });

const holder = () =>
  (
    world.fx.server.store.get('leases.coordination.k8s.io', 'drainer', SLOT) as {
      spec?: { holderIdentity?: string };
    }
  ).spec?.holderIdentity;

/** n1 evacuating on the slot, as its record (the Node annotation) says; out of the queue in the same write. */
const evacuating = (n: string) =>
  world.fx.k.request({
    method: 'PATCH',
    path: `/api/v1/nodes/${n}`,
    contentType: 'application/merge-patch+json',
    body: {
      metadata: {
        labels: { 'drainer.dev/queued': null },
        annotations: {
          [STATE_ANNOTATION]: serializeRecord({ ...newRecord('cordon', new Date()), slot: SLOT }),
        },
      },
    },
  });

/** The agent's node Lease, as its agent takes it (and its restarted container takes it again). */
const agentLease = (n: string, instance: string): Promise<LeaseView> =>
  agentLeases().createLease({ name: nodeLeaseName(n), holder: instance, durationSeconds: 6 });
const renew = async (n: string) => {
  const l = await agentLeases().getLease(nodeLeaseName(n));
  await agentLeases().replaceLease({ ...l!, renewTime: microTime(new Date()) });
};

const gets = (path: string) =>
  world.fx.server.requestLog.filter((r) => r.method === 'GET' && r.path === path).length;
const nodeReads = () => gets('/api/v1/nodes/n1');
const agentLeaseReads = () =>
  gets(`/apis/coordination.k8s.io/v1/namespaces/drainer/leases/${nodeLeaseName('n1')}`);

/** n1 took the slot and started evacuating; then it is killed: nothing renewed, nothing given back. */
async function killedHolder(instance: string) {
  clock = 0;
  const first = await acquire(agent(instance), 'n1', 1000);
  expect(holder()).toBe(`n1/${instance}`);
  await evacuating('n1');
  await agentLease('n1', instance);
  first!.abandon();
}

/** Lets the waiter's loop go round a few more times (every 20 ms, each reading its clock). */
async function turns() {
  const at = reads;
  await until(() => reads >= at + 20, 'the waiter looks again');
}

describe("a slot holder killed while its host's migrations go on", () => {
  it('keeps its slot while its agent may come back; the restarted agent takes it back, and hands it on when done', async () => {
    await killedHolder('n1-pod-1');
    let n2Slot: Slot | undefined;
    const n2 = acquire(agent('n2-pod-1'), 'n2', 2000).then((s) => (n2Slot = s));
    await turns();
    expect(nodeReads()).toBe(0); // a slot within its duration costs the waiter no look at its holder

    // the slot is not renewed for longer than its duration: n2 looks at n1's record and agent Lease
    clock = 3500;
    await until(() => agentLeaseReads() > 0, "n2 reads n1's agent Lease");
    await turns();
    expect(nodeReads()).toBe(1);
    expect(n2Slot).toBeUndefined();
    expect(holder()).toBe('n1/n1-pod-1');

    // n1's container starts again 2.4 s after the kill: its agent renews its node Lease, so when
    // n2's look would have found the agent gone, it finds it back
    await renew('n1');
    clock = 10_000;
    await until(() => agentLeaseReads() > 1, "n2 reads n1's agent Lease again");
    await turns();
    expect(n2Slot).toBeUndefined();

    // the restarted agent resumes: the slot its record names is still its node's, taken back without queueing
    const enqueued: string[] = [];
    const back = await acquire(agent('n1-pod-1'), 'n1', 1000, enqueued, SLOT);
    expect(back?.name).toBe(SLOT);
    expect(enqueued).toEqual([]);
    expect(holder()).toBe('n1/n1-pod-1');

    // its evacuation done, it gives the slot back: n2 takes it at once, without another look at n1
    const looks = nodeReads();
    await back!.release();
    await n2;
    expect(n2Slot?.name).toBe(SLOT);
    expect(holder()).toBe('n2/n2-pod-1');
    expect(nodeReads()).toBe(looks);
  }, 20_000);

  it('goes on to the next node once its agent Lease has not been renewed for agentLeaseDuration', async () => {
    await killedHolder('n1-pod-1');
    let n2Slot: Slot | undefined;
    const n2 = acquire(agent('n2-pod-1'), 'n2', 2000).then((s) => (n2Slot = s));
    await turns(); // n2 has seen the slot
    clock = 3500;
    await until(() => agentLeaseReads() > 0, "n2 reads n1's agent Lease");
    await turns();
    expect(n2Slot).toBeUndefined();

    // 6 s of n2's own time since it first saw n1's agent Lease, unchanged: the agent is gone
    clock = 3500 + 6100;
    await n2;
    expect(n2Slot?.name).toBe(SLOT);
    expect(holder()).toBe('n2/n2-pod-1');
  }, 20_000);

  it('goes on at once when the holder pod no longer exists (force-deleted: no container comes back)', async () => {
    const gone = 'drainer-abcde/0b6f3a52-1c1e-4d8e-9a51-5b8e0f3f6d10';
    await killedHolder(gone);
    let n2Slot: Slot | undefined;
    const n2 = acquire(agent('n2-pod-1'), 'n2', 2000).then((s) => (n2Slot = s));
    await turns(); // n2 has seen the slot
    clock = 3500;
    await n2;
    expect(n2Slot?.name).toBe(SLOT);
    expect(holder()).toBe('n2/n2-pod-1');
  }, 20_000);

  it('a slot left by a stopped agent whose host was restored since is given back: a new maintenance queues behind n2', async () => {
    // seed 7: n1's agent was stopped holding the slot; its successor restored n1 (no evacuation on
    // the slot any more) and is asked again at once, by a new trigger, while n2 waits first in line
    await killedHolder('n1-pod-1');
    let n2Slot: Slot | undefined;
    const n2 = acquire(agent('n2-pod-1'), 'n2', 2000).then((s) => (n2Slot = s));
    await turns();
    expect(n2Slot).toBeUndefined();

    // the new maintenance is queued after n2's: its record names no slot, so the Lease naming n1 is not its own
    const enqueued: string[] = [];
    let n1Slot: Slot | undefined;
    const n1 = acquire(agent('n1-pod-2'), 'n1', 3000, enqueued).then((s) => (n1Slot = s));
    await n2;
    expect(n2Slot?.name).toBe(SLOT);
    expect(holder()).toBe('n2/n2-pod-1');
    await evacuating('n2');
    expect(enqueued).toEqual(['n1']);
    await turns();
    expect(n1Slot).toBeUndefined();

    // n2 done: n1's turn
    await n2Slot!.release();
    await n1;
    expect(n1Slot?.name).toBe(SLOT);
    expect(holder()).toBe('n1/n1-pod-2');
  }, 20_000);
});
