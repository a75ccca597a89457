// First in, first out by the API server's clock among the nodes waiting for a slot (issue 48: each
// agent stamped its queue time on its own clock, and with two agents 30 s apart a node cordoned 20 s
// later went first). Times are the API server's, in ms.
import { describe, expect, it } from 'vitest';
import { queueOrder } from '../../src/invariants/rules/fifo.ts';
import type { ObservedQueue } from '../../src/invariants/world.ts';
import { OPTS, world } from './world.ts';

const LEASE = 15_000;
const ids = (queue: Omit<ObservedQueue, 'staleMs'>, budget = 1) =>
  queueOrder(world({ observations: { queue: { staleMs: LEASE, ...queue } } }), { ...OPTS, budget }).map(
    (v) => v.id,
  );

describe('the fair queue, by the API server’s clock', () => {
  it('a node queued 20 s later takes the only slot while the first still waits', () => {
    const queued = [
      { node: 'a', from: 1_000 },
      { node: 'b', from: 21_000, until: 40_100 },
    ];
    const slots = [
      { node: 'z', slot: 's0', from: 0, until: 40_000 },
      { node: 'b', slot: 's0', from: 40_050 },
    ];
    expect(ids({ queued, slots })).toEqual(['queue-out-of-order']);
  });

  it('two nodes queued within a second of each other have no order (the Date header is whole seconds)', () => {
    const queued = [
      { node: 'a', from: 21_000 },
      { node: 'b', from: 21_120, until: 40_100 },
    ];
    const slots = [
      { node: 'z', slot: 's0', from: 0, until: 40_000 },
      { node: 'b', slot: 's0', from: 40_050 },
    ];
    expect(ids({ queued, slots })).toEqual([]);
  });

  it('on a record whose clock runs faster than the Date header (the soak: 20 times), a second is longer', () => {
    // seed 460708: hv-2 and hv-1 queued 0.22 s apart on the API server's clock, 4.4 s on the soak's;
    // the agents' places (whole Date seconds) put hv-1 first, and it went first
    const judged = (gap: number) =>
      queueOrder(
        world({
          observations: {
            queue: {
              staleMs: 20 * LEASE,
              resolutionMs: 20_000,
              queued: [
                { node: 'hv-2', from: 100_000 },
                { node: 'hv-1', from: 100_000 + gap, until: 200_100 },
              ],
              slots: [
                { node: 'z', slot: 's0', from: 0, until: 200_000 },
                { node: 'hv-1', slot: 's0', from: 200_050 },
              ],
            },
          },
        }),
        { ...OPTS, budget: 1 },
      ).map((v) => v.id);
    expect(judged(4_400)).toEqual([]);
    // a full second of the server's clock earlier, it was ahead
    expect(judged(21_000)).toEqual(['queue-out-of-order']);
  });

  it('the first queued takes it: in order', () => {
    const queued = [
      { node: 'a', from: 1_000, until: 40_100 },
      { node: 'b', from: 21_000 },
    ];
    const slots = [
      { node: 'z', slot: 's0', from: 0, until: 40_000 },
      { node: 'a', slot: 's0', from: 40_050 },
    ];
    expect(ids({ queued, slots })).toEqual([]);
  });

  it('two slots free: the second in line may take one first, the first takes the other', () => {
    const queued = [
      { node: 'a', from: 1_000, until: 40_200 },
      { node: 'b', from: 21_000, until: 40_100 },
    ];
    const slots = [
      { node: 'b', slot: 's1', from: 40_050 },
      { node: 'a', slot: 's0', from: 40_150 },
    ];
    expect(ids({ queued, slots }, 2)).toEqual([]);
  });

  it('the stale jump: the slot was left free for a lease duration by the node ahead (its agent gone)', () => {
    const queued = [
      { node: 'a', from: 1_000 },
      { node: 'b', from: 21_000, until: 60_100 },
    ];
    const slots = [
      { node: 'z', slot: 's0', from: 0, until: 40_000 },
      { node: 'b', slot: 's0', from: 40_000 + LEASE + 10 },
    ];
    expect(ids({ queued, slots })).toEqual([]);
  });

  it('taken over from a holder that stopped renewing: free once its Lease ran out', () => {
    const queued = [
      { node: 'a', from: 1_000 },
      { node: 'b', from: 21_000 },
    ];
    const early = [
      { node: 'z', slot: 's0', from: 0, renewedAt: 30_000, until: 45_500 },
      { node: 'b', slot: 's0', from: 45_500 },
    ];
    expect(ids({ queued, slots: early })).toEqual(['queue-out-of-order']);
    const late = [
      { node: 'z', slot: 's0', from: 0, renewedAt: 30_000, until: 30_000 + 2 * LEASE },
      { node: 'b', slot: 's0', from: 30_000 + 2 * LEASE },
    ];
    expect(ids({ queued, slots: late })).toEqual([]);
  });

  describe('a node back in the queue with its old place (a retry, a resumed evacuation)', () => {
    // z gives the slot back at 40 s and b, queued at 21 s, takes it; a queued at 1 s and left at 5 s
    const slots = [
      { node: 'z', slot: 's0', from: 0, until: 40_000 },
      { node: 'b', slot: 's0', from: 40_050 },
    ];
    const back = (since: number) => [
      { node: 'a', from: 1_000, until: 5_000 },
      { node: 'a', from: 1_000, since },
      { node: 'b', from: 21_000, until: 40_100 },
    ];

    it('waits only from its return', () => {
      expect(ids({ queued: back(50_000), slots })).toEqual([]);
      expect(ids({ queued: back(30_000), slots })).toEqual(['queue-out-of-order']);
    });

    it('back within a second before the take: the taker could not know yet', () => {
      // seed 424242 round 18: blade-2, refused, put its old place back while hv-2 took the free slot;
      // its label and its word of return are two writes, and the word reaches waiters by their watch
      expect(ids({ queued: back(39_600), slots })).toEqual([]);
      // back a second before it, it was ahead
      expect(ids({ queued: back(39_050), slots })).toEqual(['queue-out-of-order']);
    });
  });

  it('says nothing without the queue observed', () => {
    expect(queueOrder(world(), OPTS)).toEqual([]);
  });
});
