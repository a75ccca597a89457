// Stories: clocks differ between machines, and Lease expiry must not depend on it. An agent whose
// clock runs 30 s ahead waits for a live holder's slot; one whose clock runs behind still takes a
// dead holder's slot after the lease duration. A run-once on a laptop 120 s ahead does not take
// the node Lease of a live agent; it watches the Lease and sees it renewed. Expiry is timed, as
// client-go's leader election does, from when this process saw the Lease's record change.
import { describe, expect, it } from 'vitest';
import { FleetBudget } from '../../src/core/fleet/budget.ts';
import type { Slot } from '../../src/core/fleet/types.ts';
import { NodeLease } from '../../src/core/agent/node-lease.ts';
import { node, queueNode } from '../kube/sandbox.ts';
import { quietLogger } from './fakes.ts';
import { fleetWorld } from './fleet-world.ts';

const skewed = (ms: number) => () => new Date(Date.now() + ms);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const world = fleetWorld(['n1', 'n2']);
const { held, holderOf } = world;

describe('fleet slots between agents whose clocks differ', () => {
  const api = () => world.api();
  const agent = (clockMs: number) =>
    new FleetBudget({
      api: api(),
      budget: 1,
      leaseDuration: 1.5,
      log: quietLogger(),
      signal: world.stop.signal,
      now: skewed(clockMs),
    });
  const wait = (a: FleetBudget, n: string, since: number) =>
    a.acquire({
      node: n,
      queuedSince: new Date(since),
      signal: world.stop.signal,
      enqueue: async () => undefined,
      onWait: () => undefined,
    });

  it('an agent 30 s ahead does not take the slot a live agent renews; it takes it once given back', async () => {
    const live = await wait(agent(0), 'n1', 1000);
    expect(live).toBeDefined();
    held.push(live!);
    let got: Slot | undefined;
    const ahead = wait(agent(30_000), 'n2', 2000).then((s) => (got = s));

    await sleep(3000); // two lease durations, with renewals every 0.5 s
    expect(got).toBeUndefined();
    expect(holderOf('drainer-evacuation-0')).toBe('n1');

    await live!.release();
    await ahead;
    expect(got).toBeDefined();
    held.push(got!);
    expect(holderOf('drainer-evacuation-0')).toBe('n2');
  }, 15_000);

  it("an agent 60 s behind takes a dead holder's slot after the lease duration of its own time", async () => {
    const dead = await wait(agent(0), 'n1', 1000);
    dead!.abandon(); // killed: never renewed, never given back
    const started = performance.now();

    const slot = await wait(agent(-60_000), 'n2', 2000);

    held.push(slot!);
    expect(holderOf('drainer-evacuation-0')).toBe('n2');
    // one lease duration after it first saw the record (and a wake-up's slack), not 60 s later
    expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
    expect(performance.now() - started).toBeLessThan(6000);
  }, 15_000);
});

describe('a waiter behind a node that does not come for the free slot', () => {
  // n2 is queued ahead of n3 (its label) but never takes the free slot (its agent is gone): n3 takes
  // it after a lease duration of its own monotonic time, never because its wall clock stepped.
  const queue = (n: string, since: number) => queueNode(world.fx, n, since);

  /** A holder change in the fleet namespace: every waiter looks again. */
  const wakeWaiters = async (name: string) =>
    world.fx.k.request({
      method: 'POST',
      path: '/apis/coordination.k8s.io/v1/namespaces/drainer/leases',
      body: { metadata: { name }, spec: { holderIdentity: 'someone-else' } },
    });

  it('an NTP step of an hour does not make it jump the queue; its own time passing a lease duration does', async () => {
    await world.fx.k.request({ method: 'POST', path: '/api/v1/nodes', body: node('n3') });
    await queue('n2', 1000);
    let wall = Date.now();
    let mono = 0;
    const budget = new FleetBudget({
      api: world.api(),
      budget: 1,
      leaseDuration: 30,
      log: quietLogger(),
      signal: world.stop.signal,
      now: () => new Date(wall),
      monotonic: () => mono,
    });
    let got: Slot | undefined;
    const waiting = budget
      .acquire({
        node: 'n3',
        queuedSince: new Date(2000),
        signal: world.stop.signal,
        enqueue: () => queue('n3', 2000),
        onWait: () => undefined,
      })
      .then((s) => (got = s));
    await sleep(300); // n3 has listed the queue: n2 is ahead, the one slot free

    wall += 3_600_000; // the wall clock steps an hour ahead
    await wakeWaiters('other-1');
    await sleep(300);
    expect(got).toBeUndefined();
    expect(
      world.fx.server.store.find('leases.coordination.k8s.io', 'drainer', 'drainer-evacuation-0'),
    ).toBeUndefined();

    mono += 31_000; // a lease duration of n3's own time, and n2 never came
    await wakeWaiters('other-2');
    await waiting;
    held.push(got!);
    expect(holderOf('drainer-evacuation-0')).toBe('n3');
  }, 15_000);
});

describe('the node Lease seen from a run-once on another machine', () => {
  const nodeLease = (instance: string, clockMs: number) =>
    new NodeLease({
      api: world.api('node-agent'),
      node: 'n1',
      instance,
      durationSeconds: 1.5,
      log: quietLogger(),
      now: skewed(clockMs),
    });

  it("a run-once 120 s ahead does not take a live agent's Lease: it sees it renewed, and names the holder", async () => {
    const daemon = await nodeLease('drainer-abc/uid-1', 0).tryTake();
    expect('held' in daemon).toBe(true);
    if ('held' in daemon) held.push(daemon.held);

    const first = await nodeLease('laptop/42', 120_000).tryTake();
    expect(first).toMatchObject({ holder: 'drainer-abc/uid-1' });

    const watched = await nodeLease('laptop/42', 120_000).takeWatching(world.stop.signal);
    expect(watched).toMatchObject({ holder: 'drainer-abc/uid-1', live: true });
    expect(holderOf('drainer-node-n1')).toBe('drainer-abc/uid-1');
  }, 15_000);

  it('a run-once takes the Lease of an agent that died, after watching it unchanged for its duration', async () => {
    const daemon = await nodeLease('drainer-abc/uid-1', 0).tryTake();
    if ('held' in daemon) daemon.held.abandon(); // kill -9
    const started = performance.now();

    const take = await nodeLease('laptop/42', 120_000).takeWatching(world.stop.signal);

    expect('held' in take).toBe(true);
    if ('held' in take) held.push(take.held);
    expect(holderOf('drainer-node-n1')).toBe('laptop/42');
    expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
  }, 15_000);
});
