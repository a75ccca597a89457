// Never more nodes evacuating at once than the fleet budget allows, counted both ways an operator
// sees them: the records saying Evacuating (status, metrics) and the live slot Leases (what the
// agents go by). A node that gave its slot back but still says Evacuating counts, as does one that
// holds a slot and has not yet written Evacuating.
import { holderNode } from '../../core/fleet/budget.ts';
import { leaseExpired } from '../agents.ts';
import { recordOf } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

/** The nodes holding a fleet slot Lease that has not run out (by its renewTime, no slack). */
const slotHolders = (world: World, opts: CheckOptions): string[] =>
  (world.leases ?? [])
    .filter(
      (l) =>
        l.component === 'fleet-slot' &&
        l.holder &&
        !leaseExpired(l, world.at, { ...opts, clockSlackSeconds: 0 }),
    )
    .map((l) => holderNode(l.holder ?? ''));

export function withinBudget(world: World, opts: CheckOptions): Violation[] {
  if (opts.budget <= 0) return [];
  const evacuating = world.nodes.filter((n) => recordOf(n)?.phase === 'Evacuating').map((n) => n.name);
  const holders = slotHolders(world, opts);
  const busy = [...new Set([...evacuating, ...holders])].sort();
  if (busy.length <= opts.budget) return [];
  const how = (n: string) =>
    [evacuating.includes(n) ? 'Evacuating' : '', holders.includes(n) ? 'slot' : '']
      .filter(Boolean)
      .join(', ');
  return [
    violation(
      'budget-exceeded',
      'fleet',
      `${busy.length} nodes are evacuating (${busy.map((n) => `${n}: ${how(n)}`).join('; ')}), the budget fleet.maxConcurrentEvacuations allows ${opts.budget}`,
      `every agent must use the same fleet.maxConcurrentEvacuations and fleet.namespace; look at the slot Leases drainer-evacuation-* in namespace ${opts.namespace} and each node's phase (\`drainer status\`)`,
    ),
  ];
}
