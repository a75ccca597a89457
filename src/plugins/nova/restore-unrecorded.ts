// Restore with no record (lost, or unreadable and `restore --force`), and what any restore of a node
// still to be evacuated leaves: a service disabled with our reason prefix is recognisably ours and is
// enabled, any other left alone; the servers drainer stopped and marked on the host are started (the
// mark is their memory). A node still to be evacuated (NodeRef.inMaintenance: a forced restore before
// the uncordon, while a drain may run) keeps its service disabled, so Nova places nothing there (an
// owner's boot, resize or unshelve); the next evacuation takes the disable over, and its restore, or
// the stranded check once the node is in service, enables it.
import type { NodeRef, RestoreContext } from '../../core/backends/plugin.ts';
import type { NovaConfig } from '../../config/schema.ts';
import type { ComputeClient } from './compute.ts';
import { resolveServiceHost } from './mapping.ts';
import { startMarked } from './marked.ts';
import type { RestartOptions } from './restart.ts';

/** Says why the service stays disabled on a node still to be evacuated. */
export function leftDisabled(ctx: Pick<RestoreContext, 'log'>, host: string, reason: string): void {
  ctx.log.warn(
    { host, reason },
    'nova-compute service left disabled: the node is still to be evacuated (its restore after the uncordon enables it)',
  );
}

export async function restoreUnrecorded(
  compute: ComputeClient,
  nova: Pick<NovaConfig, 'hostMapping' | 'disabledReasonPrefix'>,
  node: NodeRef,
  ctx: RestoreContext,
  restart: RestartOptions,
): Promise<void> {
  await compute.init(ctx.signal);
  const { host, service: svc } = await resolveServiceHost(compute, node.name, nova.hostMapping, ctx.signal);
  await startMarked(compute, host, new Set(), ctx, restart);
  const ours = svc.status === 'disabled' && (svc.disabled_reason ?? '').startsWith(nova.disabledReasonPrefix);
  if (!ours) {
    ctx.log.info({ host, status: svc.status }, 'nova: no record, and the service is not disabled by drainer');
    return;
  }
  if (node.inMaintenance) return leftDisabled(ctx, host, svc.disabled_reason ?? '');
  if (ctx.dryRun) {
    ctx.log.info({ host }, 'dry run: would enable the nova-compute service (disabled by drainer, no record)');
    return;
  }
  await compute.enableService(svc, ctx.signal);
  ctx.log.info(
    { host, reason: svc.disabled_reason },
    'nova-compute service enabled (disabled by drainer, no record)',
  );
}
