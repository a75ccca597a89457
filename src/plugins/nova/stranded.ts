// Nova's stranded changes on a node with no record (core/restore/stranded.ts decides for the
// service; the same predicate drainer doctor uses): its nova-compute service disabled with
// drainer's reason, and servers on its host that carry drainer's stop mark (stop-mark.ts), which a
// Node deleted and registered again took the record of. When the node is in service the service
// is enabled and those servers still drainer's to start are started; otherwise both are only told.
// A node that is no hypervisor has nothing to find.
import { strandedAction } from '../../core/restore/stranded.ts';
import type { NodeRef, StrandedChange, StrandedOptions } from '../../core/backends/plugin.ts';
import type { NovaConfig } from '../../config/schema.ts';
import { isHostMappingError } from '../../errors.ts';
import type { ComputeClient } from './compute.ts';
import { resolveServiceHost, type HostMapping } from './mapping.ts';
import { startMarked } from './marked.ts';
import type { Compute as RestartCompute, RestartOptions } from './restart.ts';
import { formatStopMark, stopMarkOf } from './stop-mark.ts';

type Compute = Pick<
  ComputeClient,
  'init' | 'listServices' | 'listHypervisors' | 'enableService' | 'listServersOnHost'
> &
  RestartCompute;

export async function novaStranded(
  compute: Compute,
  nova: Pick<NovaConfig, 'disabledReasonPrefix' | 'hostMapping'>,
  node: NodeRef,
  opts: StrandedOptions,
  restart: RestartOptions,
): Promise<StrandedChange | undefined> {
  await compute.init(opts.signal);
  let mapping: HostMapping;
  try {
    mapping = await resolveServiceHost(compute, node.name, nova.hostMapping, opts.signal);
  } catch (e) {
    if (isHostMappingError(e)) return undefined; // not a hypervisor: no service to strand
    throw e;
  }
  const svc = mapping.service;
  const service = { status: svc.status, disabledReason: svc.disabled_reason ?? null };
  const action = strandedAction({
    service,
    prefix: nova.disabledReasonPrefix,
    hasRecord: false,
    inService: opts.inService,
  });
  const reason = svc.disabled_reason ?? '';
  if (action === 'restore' && !opts.dryRun) {
    await compute.enableService(svc, opts.signal);
    opts.log.info(
      { host: mapping.host, reason },
      'nova-compute service enabled (stranded: disabled by drainer, no record)',
    );
  }
  const serviceChange =
    action === 'none'
      ? undefined
      : {
          what: `nova-compute service on ${mapping.host}`,
          reason,
          restored: action === 'restore' && !opts.dryRun,
        };
  // the host takes servers again (its service enabled, by drainer now or never disabled)
  const hostInService = opts.inService && (svc.status === 'enabled' || action === 'restore');
  const servers = await markedServers(compute, mapping.host, hostInService, opts, restart);
  return merge(serviceChange, servers);
}

/** The marked servers on the host: started when it is in service, else only told. */
async function markedServers(
  compute: Compute,
  host: string,
  inService: boolean,
  opts: StrandedOptions,
  restart: RestartOptions,
): Promise<StrandedChange | undefined> {
  if (inService) {
    const done = await startMarked(compute, host, new Set(), opts, restart);
    const started = done.filter((d) => d.result === 'started' || d.result === 'kept');
    if (!started.length) return undefined;
    return {
      what: `server(s) drainer stopped on ${host}: ${started.map((d) => d.server.name).join(', ')}`,
      reason: `metadata ${[...new Set(started.map((d) => d.stoppedBy))].join('; ')}`,
      restored: started.every((d) => d.result === 'started'),
    };
  }
  const left = (await compute.listServersOnHost(host, opts.signal)).filter(
    (s) => s.status === 'SHUTOFF' && stopMarkOf(s),
  );
  if (!left.length) return undefined;
  return {
    what: `server(s) drainer stopped on ${host}: ${left.map((s) => s.name).join(', ')}`,
    reason: `metadata ${[...new Set(left.map((s) => formatStopMark(stopMarkOf(s)!)))].join('; ')}`,
    restored: false,
  };
}

/** One change to tell (the host's service and its servers together), or none. */
function merge(a: StrandedChange | undefined, b: StrandedChange | undefined): StrandedChange | undefined {
  if (!a || !b) return a ?? b;
  return {
    what: `${a.what}; ${b.what}`,
    reason: `${a.reason}; ${b.reason}`,
    restored: a.restored && b.restored,
  };
}
