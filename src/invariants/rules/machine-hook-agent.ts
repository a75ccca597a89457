// drainer doctor's list of deleted Cluster API Machines waiting on drainer's pre-drain hook with no
// agent to take it off (core/capi): only the agent of the Machine's node removes the hook, once the
// node is Evacuated, so a node whose agent is gone (or a Machine with no node) keeps Cluster API
// waiting for good. An operator finding, with the one command that lets Cluster API go on.
import { unhookCommand } from '../../core/capi/machine.ts';
import { agentAlive } from '../agents.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

export function machineHooksWithoutAgent(world: World, opts: CheckOptions): Violation[] {
  if (!world.leases) return []; // the agents were not read: nothing to say about them
  return (world.machines ?? []).flatMap((m) => {
    if (!m.deleting || !m.hooked) return [];
    const known = m.node !== undefined && world.nodes.some((n) => n.name === m.node);
    if (known && agentAlive(world, m.node ?? '', opts)) return [];
    const where = known
      ? `its node ${m.node ?? ''} has no agent running (no live Lease)`
      : 'it names no node of this cluster';
    return [
      {
        ...violation(
          'machine-hook-without-agent',
          `machine/${m.namespace}/${m.name}`,
          `Machine ${m.namespace}/${m.name} is deleted and Cluster API waits on drainer's pre-drain hook, but ${where}: no agent will evacuate the node and take the hook off`,
          `start the node's agent (it evacuates, then removes the hook), or let Cluster API drain as it is: ${unhookCommand({ metadata: { namespace: m.namespace, name: m.name } })}`,
        ),
        ...(known && m.node ? { node: m.node } : {}),
      },
    ];
  });
}
