// The budget counts evacuations the way an operator sees them: a record saying Evacuating, and a
// live slot Lease. A node that gave its slot back and still says Evacuating is one of them (issue 48:
// compute-a said Evacuating through its pod drain while compute-b took the only slot).
import { describe, expect, it } from 'vitest';
import { withinBudget } from '../../src/invariants/rules/budget.ts';
import type { WorldLease } from '../../src/invariants/world.ts';
import { AT, node, OPTS, rec, world } from './world.ts';

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
});
