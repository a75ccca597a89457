// No server that drainer stopped is left stopped once its node is back in service: the restore
// starts it again. Needs the servers' power changes with who caused each (an observation).
import { nodeOfHost } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World } from '../world.ts';

export function drainerStopLeft(world: World, opts: CheckOptions): Violation[] {
  const changes = world.observations?.powerChanges;
  if (!changes || !world.nova) return [];
  const last = new Map<string, (typeof changes)[number]>();
  for (const c of changes) last.set(c.serverId, c);
  const out: Violation[] = [];
  for (const c of last.values()) {
    if (c.to !== 'stopped' || c.by !== 'drainer') continue;
    const server = world.nova.servers.find((s) => s.id === c.serverId);
    if (!server?.host || server.status !== 'SHUTOFF') continue;
    const node = nodeOfHost(world, server.host, opts);
    const n = world.nodes.find((x) => x.name === node);
    const svc = world.nova.services.find((s) => s.host === server.host);
    // back in service: no record, and its nova-compute takes VMs again
    if (!n || n.record.kind !== 'absent' || n.unschedulable || !svc || svc.status !== 'enabled') continue;
    out.push(
      violation(
        'drainer-stop-left-stopped',
        `server/${c.serverId}`,
        `server ${c.name} was stopped by drainer at ${new Date(c.at).toISOString()} on ${server.host}; node ${n.name} is back in service, and the server is still SHUTOFF`,
        `start it (\`openstack server start ${c.serverId}\`): drainer stopped it for the maintenance and did not start it again on restore`,
      ),
    );
  }
  return out;
}
