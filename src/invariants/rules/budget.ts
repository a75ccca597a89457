// Never more nodes evacuating at once than the fleet budget allows, counted both ways an operator
// sees them: the records saying Evacuating (status, metrics) and the live slot Leases (what the
// agents go by). A node that gave its slot back but still says Evacuating counts, as does one that
// holds a slot and has not yet written Evacuating. The one exception is the budget's documented
// hand-on (README "Budget semantics", core/fleet/holder-alive.ts): a slot whose holder's agent is known
// gone passes to the next node while the gone agent's record still says Evacuating on it, as nobody
// else writes that record; its agent, back, finds the slot taken and queues again.
import { holderNode } from '../../core/fleet/budget.ts';
import { agentAlive, leaseExpired } from '../agents.ts';
import { recordOf } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World, WorldNode } from '../world.ts';

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

/**
 * Was the slot taken from this node while it went unrenewed, rather than given back? As the API
 * server saw it: its last stay on the slot ended by another node's stay beginning at that moment,
 * its last renewal a lease duration before. Without that observation: the slot's Lease now names
 * another node and this node's agent is not alive. A slot given back while Evacuating (an
 * ordering bug) is neither.
 */
function handedOn(world: World, opts: CheckOptions, node: string, slot: string): boolean {
  const q = world.observations?.queue;
  if (q) {
    const mine = q.slots.filter((s) => s.slot === slot && s.node === node).at(-1);
    if (mine?.until === undefined) return false;
    const taker = q.slots.some((s) => s.slot === slot && s.node !== node && s.from === mine.until);
    const quietMs = mine.until - (mine.renewedAt ?? mine.from);
    return taker && quietMs >= q.staleMs - (q.resolutionMs ?? 1000);
  }
  const lease = world.leases?.find((l) => l.component === 'fleet-slot' && l.name === slot);
  return !!lease?.holder && holderNode(lease.holder) !== node && agentAlive(world, node, opts) === false;
}

/** Says Evacuating, on a slot that was not handed on while its agent was gone. */
function evacuating(world: World, opts: CheckOptions, n: WorldNode): boolean {
  const r = recordOf(n);
  return r?.phase === 'Evacuating' && !(r.slot && handedOn(world, opts, n.name, r.slot));
}

export function withinBudget(world: World, opts: CheckOptions): Violation[] {
  if (opts.budget <= 0) return [];
  const evacuatingNodes = world.nodes.filter((n) => evacuating(world, opts, n)).map((n) => n.name);
  const holders = slotHolders(world, opts);
  const busy = [...new Set([...evacuatingNodes, ...holders])].sort();
  if (busy.length <= opts.budget) return [];
  const how = (n: string) =>
    [evacuatingNodes.includes(n) ? 'Evacuating' : '', holders.includes(n) ? 'slot' : '']
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
