// Every server drainer stopped runs again once the host where it is now is in service, wherever it
// went meanwhile (its owner's resize, a second evacuation's cold move onto a host that went into
// maintenance after it): the agent of that host starts it (issue 48). drainer's claim on it is its
// stop mark (Nova metadata drainer.dev:stopped, set before the os-stop) or, where the power actions
// were observed, drainer's os-stop being the last one Nova took; an owner's later power action ends
// the claim. stopped-server-left-stopped (owners.ts) already judges the case where the node it was
// stopped on is back in service too; this one adds where that node is still in maintenance, or the
// claim is known only from the mark.
import { nodeOfHost, serverHostAt } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World, WorldServer, WorldServerAction } from '../world.ts';

/** The metadata key of drainer's stop mark (src/plugins/nova/stop-mark.ts writes it). */
export const STOP_MARK_KEY = 'drainer.dev:stopped';

const lastPower = (world: World, id: string): WorldServerAction | undefined =>
  world.nova?.powerActions
    ?.filter((a) => a.serverId === id)
    .sort((x, y) => x.at - y.at)
    .at(-1);

/** The node of the host, if it is in service (no record, schedulable). */
function inService(world: World, host: string, opts: CheckOptions): string | undefined {
  const n = world.nodes.find((x) => x.name === nodeOfHost(world, host, opts));
  return n && n.record.kind === 'absent' && !n.unschedulable ? n.name : undefined;
}

/** Why the server is drainer's to start, if it is: its mark, or drainer's os-stop last. */
function claim(world: World, s: WorldServer): 'mark' | 'stop' | undefined {
  const last = lastPower(world, s.id);
  if (last && !last.byDrainer) return undefined; // the owner acted since: theirs
  if (s.metadata?.[STOP_MARK_KEY] !== undefined) return 'mark';
  return last?.action === 'os-stop' ? 'stop' : undefined;
}

export function stopMarksLeftStopped(world: World, opts: CheckOptions): Violation[] {
  return (world.nova?.servers ?? []).flatMap((s) => {
    if (s.status !== 'SHUTOFF' || !s.host) return [];
    const why = claim(world, s);
    const node = why ? inService(world, s.host, opts) : undefined;
    if (!why || !node) return [];
    const stop = lastPower(world, s.id);
    const stoppedOn = stop ? (serverHostAt(world, s.id, stop.at) ?? s.host) : undefined;
    // stopped-server-left-stopped names it when the node it was stopped on is in service as well
    if (stop?.action === 'os-stop' && stoppedOn && inService(world, stoppedOn, opts)) return [];
    const mark = s.metadata?.[STOP_MARK_KEY];
    const evidence =
      why === 'mark'
        ? `${s.name} (${s.id}) carries drainer's stop mark "${mark ?? ''}"`
        : `drainer stopped ${s.name} (${s.id})${stoppedOn ? ` on ${stoppedOn}` : ''} and no power action came since`;
    return [
      violation(
        'stop-mark-left-stopped',
        `server/${s.name}`,
        `${evidence}, and it is still SHUTOFF on ${s.host}, whose node ${node} is in service`,
        `the agent of node ${node} starts it; if none runs there: \`openstack server start ${s.id}\``,
      ),
    ];
  });
}
