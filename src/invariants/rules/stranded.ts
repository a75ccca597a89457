// Every nova-compute service disabled with drainer's reason belongs to a node with a record, or an
// Event says why it is left (StrandedService). Otherwise nobody will ever enable it again.
import { isDisabledByDrainer, strandedEventReason } from '../../core/restore/stranded.ts';
import { nodeOfHost } from '../hosts.ts';
import { violation, type Violation } from '../violation.ts';
import { orWithoutAgent } from './without-agent.ts';
import type { CheckOptions, World } from '../world.ts';

export function strandedServices(world: World, opts: CheckOptions): Violation[] {
  const out: Violation[] = [];
  for (const svc of world.nova?.services ?? []) {
    if (!isDisabledByDrainer(svc, opts.disabledReasonPrefix)) continue;
    const node = nodeOfHost(world, svc.host, opts);
    const n = node ? world.nodes.find((x) => x.name === node) : undefined;
    if (n && n.record.kind !== 'absent') continue; // a record (or one the agent reports unreadable) owns it
    const told = world.events.some(
      (e) => e.reason === strandedEventReason && (e.name === node || e.message.includes(svc.host)),
    );
    if (told) continue;
    const whose = n
      ? `node ${n.name} has no drainer.dev/state record (it was deleted and registered again, or the record was removed)`
      : `no Node is known for this host${node ? ` (no Node named ${node})` : ''}`;
    const v = violation(
      'stranded-service',
      `nova-compute/${svc.host}`,
      `disabled with drainer's reason "${svc.disabledReason ?? ''}" but ${whose}, and no ${strandedEventReason} Event says why`,
      n
        ? `the node's agent enables it when the node is in service; or run \`drainer restore --node ${n.name}\``
        : `if the host is back in service: \`openstack compute service set --enable ${svc.host} nova-compute\``,
    );
    // the node's agent would enable it: with none there, the operator's finding
    out.push(
      n
        ? orWithoutAgent(
            world,
            opts,
            n.name,
            v,
            'stranded-service-without-agent',
            `\`drainer restore --node ${n.name}\``,
          )
        : v,
    );
  }
  return out;
}
