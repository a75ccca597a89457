// VMs have owners (issue 35): drainer starts again what it stopped, and only that.
// - stopped-server-left-stopped: a server whose last power action Nova took was drainer's os-stop is
//   still SHUTOFF while the node it was stopped on is back in service (no record, not cordoned): the
//   maintenance that stopped it has ended. Wherever the server is now: a move since (its owner's
//   resize, another evacuation) is no power action, and Nova keeps a stopped server stopped; only
//   not while the node it is on now is in maintenance itself (drainer starts nothing there).
// - owner-stop-undone: drainer's os-start of a server whose owner had stopped it (the owner's os-stop
//   came after drainer's last one).
// Needs the power actions as Nova took them (observed in the sandbox); without them, says nothing.
import { nodeOfHost, serverHostAt } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World, WorldServerAction } from '../world.ts';

const byServer = (actions: readonly WorldServerAction[]): Map<string, WorldServerAction[]> => {
  const out = new Map<string, WorldServerAction[]>();
  for (const a of [...actions].sort((x, y) => x.at - y.at))
    out.set(a.serverId, [...(out.get(a.serverId) ?? []), a]);
  return out;
};

export function drainerStopsUndone(world: World, opts: CheckOptions): Violation[] {
  const nova = world.nova;
  if (!nova?.powerActions) return [];
  const actions = byServer(nova.powerActions);
  return nova.servers.flatMap((s) => {
    const last = actions.get(s.id)?.at(-1);
    if (!last || last.action !== 'os-stop' || !last.byDrainer || s.status !== 'SHUTOFF' || !s.host) return [];
    const stoppedOn = serverHostAt(world, s.id, last.at) ?? s.host;
    const inService = (host: string) => {
      const n = world.nodes.find((x) => x.name === nodeOfHost(world, host, opts));
      return n && n.record.kind === 'absent' && !n.unschedulable ? n : undefined;
    };
    // and not held by a maintenance of the node it is on now (drainer does not start it there)
    const node = inService(stoppedOn);
    if (!node || !inService(s.host)) return [];
    const now = s.host === stoppedOn ? '' : ` (now on ${s.host})`;
    return [
      violation(
        'stopped-server-left-stopped',
        `server/${s.name}`,
        `drainer stopped ${s.name} (${s.id}) on ${stoppedOn} for the maintenance, and it is still SHUTOFF${now} ` +
          `with node ${node.name} back in service`,
        `start it (openstack server start ${s.id}); the agent's log says why its restore did not`,
      ),
    ];
  });
}

export function ownerStopsUndone(world: World): Violation[] {
  const nova = world.nova;
  if (!nova?.powerActions) return [];
  const name = (id: string) => nova.servers.find((s) => s.id === id)?.name ?? id;
  return [...byServer(nova.powerActions)].flatMap(([id, actions]) => {
    let ownerStopped = false; // the owner's os-stop is the last stop Nova took
    const found: Violation[] = [];
    for (const a of actions) {
      if (a.action === 'os-stop') ownerStopped = !a.byDrainer;
      else if (a.byDrainer && ownerStopped)
        found.push(
          violation(
            'owner-stop-undone',
            `server/${name(id)}`,
            `drainer started ${name(id)} (${id}), which its owner had stopped (not drainer)`,
            'a bug: drainer must start only what it stopped; stop it again if its owner wants it off',
          ),
        );
      else ownerStopped = false;
    }
    return found;
  });
}
