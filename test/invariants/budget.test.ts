// The budget counts evacuations the way an operator sees them: a record saying Evacuating, and a
// live slot Lease. A node that gave its slot back and still says Evacuating is one of them (issue 48:
// compute-a said Evacuating through its pod drain while compute-b took the only slot).
import { describe, expect, it } from 'vitest';
import { withinBudget } from '../../src/invariants/rules/budget.ts';
import type { WorldLease } from '../../src/invariants/world.ts';
import { AT, liveAgent, node, OPTS, rec, world } from './world.ts';

const slot = (i: number, holderNode: string, renewedMsAgo = 1000): WorldLease => ({
  name: `drainer-evacuation-${i}`,
  component: 'fleet-slot',
  holder: `${holderNode}/${holderNode}-pod/uid`,
  renewTime: new Date(AT.getTime() - renewedMsAgo).toISOString(),
  durationSeconds: 15,
});

const two = { ...OPTS, budget: 2 };

describe('the fleet budget, by phases and by slot Leases', () => {
  it('counts a node still saying Evacuating after its slot went to another, beside the two holders', () => {
    const w = world({
      nodes: [node('a', rec('Evacuating')), node('b', rec('Evacuating')), node('c', rec('Queued'))],
      leases: [slot(0, 'b'), slot(1, 'c')],
    });
    const found = withinBudget(w, two);
    expect(found.map((v) => v.id)).toEqual(['budget-exceeded']);
    expect(found[0]?.evidence).toBe(
      '3 nodes are evacuating (a: Evacuating; b: Evacuating, slot; c: slot), the budget fleet.maxConcurrentEvacuations allows 2',
    );
  });

  it('holds when each node evacuating holds its slot', () => {
    const w = world({
      nodes: [node('a', rec('Evacuating')), node('b', rec('Evacuating'))],
      leases: [slot(0, 'a'), slot(1, 'b')],
    });
    expect(withinBudget(w, two)).toEqual([]);
  });

  it('leaves out a slot Lease that ran out (its holder is gone; another may take it)', () => {
    const w = world({
      nodes: [node('a', rec('Evacuating')), node('b', rec('Evacuating')), node('c', rec('Queued'))],
      leases: [slot(0, 'a'), slot(1, 'c', 60_000)],
    });
    expect(withinBudget(w, two)).toEqual([]);
  });

  it('still counts phases where the Leases could not be read', () => {
    const w = world({ nodes: [node('a', rec('Evacuating')), node('b', rec('Evacuating'))] });
    expect(withinBudget(w, OPTS).map((v) => v.id)).toEqual(['budget-exceeded']);
  });

  describe('a slot handed on while its holder\'s agent was gone (README "Budget semantics")', () => {
    // n1's agent went quiet on slot 0 at 1 000 and n2 took the slot at 8 000: n1's record, which
    // only n1's agent writes, still says Evacuating on it until that agent comes back and queues
    const spans = (n1Until: number, n2From: number) => ({
      queue: {
        queued: [],
        slots: [
          { node: 'n1', slot: 'drainer-evacuation-0', from: 0, renewedAt: 1000, until: n1Until },
          { node: 'n2', slot: 'drainer-evacuation-0', from: n2From },
        ],
        staleMs: 3000,
      },
    });
    const nodes = [
      node('n1', rec('Evacuating', { slot: 'drainer-evacuation-0' })),
      node('n2', rec('Evacuating', { slot: 'drainer-evacuation-0' })),
    ];

    it("does not count the gone agent's record beside the node that took its slot over", () => {
      expect(withinBudget(world({ nodes, observations: spans(8000, 8000) }), OPTS)).toEqual([]);
    });

    it('counts it when the slot was given back while the record still said Evacuating', () => {
      // n1 released the slot at 5 000 (its stay ended, nobody else's began then): an ordering bug
      const found = withinBudget(world({ nodes, observations: spans(5000, 5200) }), OPTS);
      expect(found[0]?.evidence).toBe(
        '2 nodes are evacuating (n1: Evacuating; n2: Evacuating), the budget fleet.maxConcurrentEvacuations allows 1',
      );
    });

    it('counts it when the slot was taken from a holder that renewed it just before', () => {
      const taken = spans(8000, 8000);
      const fresh = { ...taken, queue: { ...taken.queue, staleMs: 30_000 } };
      expect(withinBudget(world({ nodes, observations: fresh }), OPTS).map((v) => v.id)).toEqual([
        'budget-exceeded',
      ]);
    });

    it('without the queue observed: not counted while its agent is not alive, counted once it is', () => {
      const leases = [slot(0, 'n2')];
      expect(withinBudget(world({ nodes, leases }), OPTS)).toEqual([]);
      const back = [...leases, liveAgent('n1')];
      expect(withinBudget(world({ nodes, leases: back }), OPTS).map((v) => v.id)).toEqual([
        'budget-exceeded',
      ]);
    });
  });
});
