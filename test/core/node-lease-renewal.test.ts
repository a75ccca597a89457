// Story: an idle agent's node Lease is most of what it asks the API server for (issue 38). It is
// renewed every half of fleet.agentLeaseDuration: at the default 300 s, 24 writes an hour, and a
// renewal that fails (an API server down for up to 150 s) leaves another try before the Lease runs
// out. A fleet slot, held only while its node evacuates, keeps its renewal every third.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeldSlot } from '../../src/core/fleet/budget.ts';
import type { FleetApi, LeaseView } from '../../src/core/fleet/types.ts';
import { NodeLease } from '../../src/core/agent/node-lease.ts';
import { quietLogger } from './fakes.ts';

/** The Leases of one namespace; `down` makes every request fail as an API server that is away. */
class Leases implements Pick<FleetApi, 'getLease' | 'createLease' | 'replaceLease'> {
  readonly byName = new Map<string, LeaseView>();
  writes = 0;
  down = false;
  #rv = 1;
  async getLease(name: string) {
    this.#up();
    return this.byName.get(name);
  }
  async createLease(l: LeaseView) {
    return this.replaceLease(l);
  }
  async replaceLease(l: LeaseView) {
    this.#up();
    this.writes++;
    const stored = { ...l, resourceVersion: String(this.#rv++) };
    this.byName.set(l.name, stored);
    return stored;
  }
  #up() {
    if (this.down) throw new Error('connect ECONNREFUSED');
  }
}

beforeEach(() =>
  vi.useFakeTimers({
    toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'Date', 'performance'],
  }),
);
afterEach(() => vi.useRealTimers());

const minutes = (m: number) => vi.advanceTimersByTimeAsync(m * 60_000);

describe('renewing the Leases an agent holds', () => {
  it('renews the node Lease every half of its duration, and rides out one failed renewal', async () => {
    const api = new Leases();
    const lease = new NodeLease({
      api,
      node: 'node-7',
      instance: 'drainer-abc/uid-1',
      durationSeconds: 300,
      log: quietLogger(),
    });
    const slot = await lease.acquire(new AbortController().signal);
    expect(slot).toBeDefined();
    api.writes = 0;

    await minutes(60);
    expect(api.writes).toBe(24);

    // the API server goes away just after a renewal, for two minutes and a half
    api.down = true;
    await minutes(2.5);
    api.down = false;
    await minutes(2.5);
    expect(slot!.lost.aborted).toBe(false);
    // the renewal that failed is tried again within a tenth of the duration, then the period goes on
    expect(api.writes).toBe(26);
    slot!.abandon();
  });

  it('tries a failed renewal again soon: a short outage across a renewal never lets the Lease run out', async () => {
    const api = new Leases();
    const renewedAt: number[] = [];
    const replace = api.replaceLease.bind(api);
    api.replaceLease = async (l) => {
      const stored = await replace(l);
      renewedAt.push(Date.now());
      return stored;
    };
    const lease = new NodeLease({
      api,
      node: 'node-7',
      instance: 'a/1',
      durationSeconds: 6,
      log: quietLogger(),
    });
    const slot = await lease.acquire(new AbortController().signal);
    // the API server is away from just after the first renewal until 4.5 s later (a restart)
    await vi.advanceTimersByTimeAsync(100);
    api.down = true;
    await vi.advanceTimersByTimeAsync(4400);
    api.down = false;
    await vi.advanceTimersByTimeAsync(20_000);
    const gaps = renewedAt.slice(1).map((t, i) => t - renewedAt[i]!);
    expect(Math.max(...gaps)).toBeLessThan(6000);
    expect(slot!.lost.aborted).toBe(false);
    slot!.abandon();
  });

  it('renews a fleet slot every third of its duration', async () => {
    const api = new Leases();
    const taken = await api.replaceLease({ name: 'drainer-evacuation-0', holder: 'node-7' });
    api.writes = 0;
    const slot = new HeldSlot(taken, 'node-7', { api, leaseDuration: 30, log: quietLogger() });

    await minutes(1);
    expect(api.writes).toBe(6);
    slot.abandon();
  });
});
