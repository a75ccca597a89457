// Node name → nova-compute service. In real clouds the Kubernetes node name, the service host
// and the hypervisor hostname often differ (short name vs FQDN), so try in a fixed order and
// say what was tried when nothing (or more than one thing) fits.
import { HostMappingError } from '../../errors.ts';
import type { ComputeClient } from './compute.ts';
import type { NovaService } from './types.ts';

type Lookup = Pick<ComputeClient, 'listServices' | 'listHypervisors'>;

export interface HostMapping {
  host: string;
  service: NovaService;
  /** Which step matched, for logs. */
  via: 'hostMapping' | 'exact' | 'short-name' | 'hypervisor';
}

export async function resolveServiceHost(
  compute: Lookup,
  node: string,
  explicit: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<HostMapping> {
  const tried: string[] = [];

  const mapped = explicit[node];
  if (mapped !== undefined) {
    const services = await compute.listServices(mapped, signal);
    if (services[0]) return { host: mapped, service: services[0], via: 'hostMapping' };
    tried.push(`nova.hostMapping["${node}"] = "${mapped}": no nova-compute service on that host`);
    throw new HostMappingError(`node "${node}" has no nova-compute service`, tried);
  }
  tried.push('nova.hostMapping: no entry');

  const exact = await compute.listServices(node, signal);
  if (exact[0]) return { host: node, service: exact[0], via: 'exact' };
  tried.push(`service host "${node}": none`);

  const short = node.split('.')[0] ?? node;
  if (short !== node) {
    const byShort = await compute.listServices(short, signal);
    if (byShort[0]) return { host: short, service: byShort[0], via: 'short-name' };
    tried.push(`service host "${short}": none`);
  }

  // The pattern is a substring match on Nova's side: keep only the hypervisor named exactly the node,
  // else (openstack-helm: short node name, FQDN hypervisor) the ones whose first label is the node name.
  const candidates = await compute.listHypervisors(node, signal);
  const exactHv = candidates.filter((h) => h.hypervisor_hostname === node);
  const hypervisors = exactHv.length
    ? exactHv
    : candidates.filter((h) => h.hypervisor_hostname?.split('.')[0] === node);
  const hosts = [...new Set(hypervisors.map((h) => h.service?.host).filter((h): h is string => !!h))];
  if (hosts.length === 0) {
    tried.push(`hypervisor_hostname "${node}" or "${node}.<domain>": none`);
    throw new HostMappingError(`node "${node}" matches no nova-compute service; set nova.hostMapping`, tried);
  }
  if (hosts.length > 1) {
    tried.push(`hypervisor_hostname "${node}": services on ${hosts.join(', ')}`);
    throw new HostMappingError(`node "${node}" is ambiguous; set nova.hostMapping`, tried);
  }
  const host = hosts[0]!;
  const services = await compute.listServices(host, signal);
  if (!services[0]) {
    tried.push(`hypervisor_hostname "${node}" → service host "${host}": no nova-compute service`);
    throw new HostMappingError(`node "${node}" matches no nova-compute service`, tried);
  }
  return { host, service: services[0], via: 'hypervisor' };
}
