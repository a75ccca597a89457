// Records of nodes without a live agent (nobody resumes or restores them), and fleet slots held by
// an agent that is gone (the slot is lost to the fleet until its Lease expires).
import { holderNode } from '../../core/fleet/budget.ts';
import { nodeLeaseName } from '../../core/agent/node-lease.ts';
import { agentAlive, agentLease, leaseExpired } from '../agents.ts';
import { recordOf } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

export function recordsWithoutAgent(world: World, opts: CheckOptions): Violation[] {
  if (!world.leases) return [];
  return world.nodes
    .filter((n) => n.record.kind !== 'absent' && agentAlive(world, n.name, opts) === false)
    .map((n) => {
      const l = agentLease(world, n.name);
      const since = l?.renewTime
        ? `its agent last renewed Lease ${l.name} at ${l.renewTime}`
        : `no Lease ${nodeLeaseName(n.name)}`;
      return violation(
        'record-without-agent',
        `node/${n.name}`,
        `record phase ${recordOf(n)?.phase ?? 'unreadable'}, but ${since}: nobody resumes or restores it`,
        `start the agent on node ${n.name} (is the DaemonSet scheduled there? \`kubectl -n ${opts.namespace} get pods -o wide\`), or take over by hand: \`drainer restore --node ${n.name}\``,
      );
    });
}

export function slotsOfDeadAgents(world: World, opts: CheckOptions): Violation[] {
  const out: Violation[] = [];
  for (const l of world.leases ?? []) {
    if (
      l.component !== 'fleet-slot' ||
      !l.holder ||
      leaseExpired(l, world.at, { ...opts, clockSlackSeconds: 0 })
    )
      continue;
    const node = holderNode(l.holder);
    const instance = l.holder.slice(node.length + 1);
    const agent = agentLease(world, node);
    const alive = agent && !leaseExpired(agent, world.at, opts);
    // a holder without an instance (older agents) is the node itself: any live agent of it counts
    if (alive && (!instance || agent.holder === instance)) continue;
    out.push(
      violation(
        'lease-held-by-dead-agent',
        `lease/${opts.namespace}/${l.name}`,
        `fleet slot held by ${l.holder} (renewed ${l.renewTime ?? 'never'}), but ${alive ? `node ${node}'s agent is now ${agent.holder}` : `node ${node} has no live agent`}`,
        `it frees itself ${l.durationSeconds ?? '?'} s after its last renewal; to free it now: \`kubectl -n ${opts.namespace} delete lease ${l.name}\``,
      ),
    );
  }
  return out;
}
