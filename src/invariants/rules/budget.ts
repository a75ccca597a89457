// Never more nodes Evacuating at once than the fleet budget allows.
import { recordOf } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

export function withinBudget(world: World, opts: CheckOptions): Violation[] {
  if (opts.budget <= 0) return [];
  const evacuating = world.nodes.filter((n) => recordOf(n)?.phase === 'Evacuating').map((n) => n.name);
  if (evacuating.length <= opts.budget) return [];
  return [
    violation(
      'budget-exceeded',
      'fleet',
      `${evacuating.length} nodes are Evacuating (${evacuating.join(', ')}), the budget fleet.maxConcurrentEvacuations allows ${opts.budget}`,
      `every agent must use the same fleet.maxConcurrentEvacuations and fleet.namespace; look at the slot Leases drainer-evacuation-* in namespace ${opts.namespace}`,
    ),
  ];
}
