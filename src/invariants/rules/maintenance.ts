// The record's phase agrees with the NodeMaintenance that triggered it: Evacuated ↔ Succeeded,
// Failed ↔ Failed, anything else ↔ Running; a NodeMaintenance drainer owns always has a record.
import { recordOf } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import { orWithoutAgent as withoutAgent } from './without-agent.ts';
import type { CheckOptions, World, WorldMaintenance } from '../world.ts';

const expectedPhase = (phase: string): string =>
  phase === 'Evacuated' ? 'Succeeded' : phase === 'Failed' ? 'Failed' : 'Running';

const invalid = (m: WorldMaintenance) => m.reason?.startsWith('Invalid') === true;

/** No agent writes the status or takes the NodeMaintenance up: the operator's finding. */
const orWithoutAgent = (world: World, opts: CheckOptions, node: string, v: Violation): Violation =>
  withoutAgent(world, opts, node, v, 'maintenance-without-agent', 'delete the NodeMaintenance');

export function maintenancesAgree(world: World, opts: CheckOptions): Violation[] {
  if (!opts.ownsMaintenances) return [];
  const out: Violation[] = [];
  for (const m of world.maintenances) {
    if (m.deleting || invalid(m)) continue;
    const node = world.nodes.find((n) => n.name === m.nodeName);
    if (!node || node.record.kind === 'unreadable') continue; // invalid, or the agent says why it waits
    const rec = recordOf(node);
    const object = `nodemaintenance/${m.name}`;
    if (!rec) {
      out.push(
        orWithoutAgent(
          world,
          opts,
          m.nodeName,
          violation(
            'maintenance-disagrees',
            object,
            `NodeMaintenance ${m.name} (phase ${m.phase ?? 'none'}) names node ${m.nodeName}, which has no drainer record`,
            `the node's agent takes it up within a resync; if node ${m.nodeName} has no agent (see \`drainer status\`), start one or delete the NodeMaintenance`,
          ),
        ),
      );
      continue;
    }
    const ours = rec.maintenance?.name === m.name || rec.trigger === `NodeMaintenance/${m.name}`;
    if (!ours && !m.phase) {
      // evacuated for a cordon, say: the agent still takes the NodeMaintenance (finalizer, status)
      out.push(
        orWithoutAgent(
          world,
          opts,
          m.nodeName,
          violation(
            'maintenance-disagrees',
            object,
            `NodeMaintenance ${m.name} names node ${m.nodeName} (record phase ${rec.phase}, trigger ${rec.trigger}), but has no status: no agent took it`,
            `the node's agent takes it within a resync; if node ${m.nodeName} has no agent (see \`drainer status\`), start one or delete the NodeMaintenance`,
          ),
        ),
      );
      continue;
    }
    if (!ours || m.phase === expectedPhase(rec.phase)) continue;
    out.push(
      orWithoutAgent(
        world,
        opts,
        m.nodeName,
        violation(
          'maintenance-disagrees',
          object,
          `the record of node ${m.nodeName} says ${rec.phase}, the NodeMaintenance says ${m.phase ?? 'no phase'} (expected ${expectedPhase(rec.phase)})`,
          `the agent writes the status on its next pass; if it stays, look at the agent's log for failed NodeMaintenance status writes`,
        ),
      ),
    );
  }
  // a record started by a NodeMaintenance that is gone: the node should be on its way back
  for (const n of world.nodes) {
    const rec = recordOf(n);
    const name = rec?.maintenance?.name;
    if (!rec || !name || rec.phase === 'Restoring' || world.maintenances.some((m) => m.name === name))
      continue;
    if (n.unschedulable && !rec.cordonedByUs) continue; // cordoned by someone: evacuated for that
    out.push(
      orWithoutAgent(
        world,
        opts,
        n.name,
        violation(
          'maintenance-disagrees',
          `node/${n.name}`,
          `the record (phase ${rec.phase}) holds NodeMaintenance ${name}, which no longer exists`,
          `the agent restores the node on its next pass; without an agent: \`drainer restore --node ${n.name}\``,
        ),
      ),
    );
  }
  return out;
}
