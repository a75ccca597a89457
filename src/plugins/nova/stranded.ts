// Nova's stranded change: the node's nova-compute service disabled with drainer's reason while the
// node has no record (core/restore/stranded.ts decides; the same predicate drainer doctor uses). Enabled
// again when the node is in service; a node that is no hypervisor has nothing to find.
import { strandedAction } from '../../core/restore/stranded.ts';
import type { NodeRef, StrandedChange, StrandedOptions } from '../../core/backends/plugin.ts';
import type { NovaConfig } from '../../config/schema.ts';
import { isHostMappingError } from '../../errors.ts';
import type { ComputeClient } from './compute.ts';
import { resolveServiceHost, type HostMapping } from './mapping.ts';

type Compute = Pick<ComputeClient, 'init' | 'listServices' | 'listHypervisors' | 'enableService'>;

export async function novaStranded(
  compute: Compute,
  nova: Pick<NovaConfig, 'disabledReasonPrefix' | 'hostMapping'>,
  node: NodeRef,
  opts: StrandedOptions,
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
  if (action === 'none') return undefined;
  const what = `nova-compute service on ${mapping.host}`;
  const reason = svc.disabled_reason ?? '';
  if (action === 'restore' && !opts.dryRun) {
    await compute.enableService(svc, opts.signal);
    opts.log.info(
      { host: mapping.host, reason },
      'nova-compute service enabled (stranded: disabled by drainer, no record)',
    );
  }
  return { what, reason, restored: action === 'restore' && !opts.dryRun };
}
