// drainer doctor's list of servers drainer stopped and marked (Nova metadata drainer.dev:stopped,
// plugins/nova/stop-mark.ts) that no agent will start: the agent of the host where a marked server
// is starts it once that host is in service, so a host that is no node of the cluster, or a node
// whose agent is gone, leaves it SHUTOFF for good. An operator finding (no component broke a
// promise), with the one command that starts it and takes the mark off.
import { agentAlive } from '../agents.ts';
import { nodeOfHost } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';
import { STOP_MARK_KEY } from './stop-marks.ts';

export function stopMarksWithoutAgent(world: World, opts: CheckOptions): Violation[] {
  if (!world.leases) return []; // the agents were not read: nothing to say about them
  return (world.nova?.servers ?? []).flatMap((s) => {
    const mark = s.metadata?.[STOP_MARK_KEY];
    if (mark === undefined || s.status !== 'SHUTOFF' || !s.host) return [];
    const node = nodeOfHost(world, s.host, opts);
    const known = node !== undefined && world.nodes.some((n) => n.name === node);
    if (known && agentAlive(world, node, opts)) return [];
    const where = known
      ? `whose node ${node} has no agent running (no live Lease)`
      : 'which is no node of this cluster';
    return [
      {
        ...violation(
          'stop-mark-without-agent',
          `server/${s.name}`,
          `${s.name} (${s.id}) carries drainer's stop mark "${mark}" and is SHUTOFF on ${s.host}, ${where}: no agent runs there to start it`,
          `openstack server start ${s.id} && openstack server unset --property ${STOP_MARK_KEY} ${s.id}`,
        ),
        ...(known ? { node } : {}),
      },
    ];
  });
}
