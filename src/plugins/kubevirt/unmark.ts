// Cancel with evacuation.abortOnCancel: the drain taint taken back, the open migrations deleted
// (abortOnCancel), and for VMIs a launcher-pod eviction marked
// (status.evacuationNodeName): from KubeVirt v1.7 the mark is taken back with
// PUT …/evacuate/cancel, which KubeVirt refuses while the drain taint is on (so it runs after the
// taint is removed). Older KubeVirt serves no such subresource (found by discovery, not by version
// guess): the mark stays, KubeVirt will migrate the VMI again, and drainer says so.
import type { EvacuationContext, NodeRef } from '../../core/backends/plugin.ts';
import { isCancelledError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import { vmiKey } from './classify.ts';
import type { KubevirtApi } from './port.ts';
import type { Tracker } from './tracker.ts';
import type { Triggers } from './triggers.ts';

/** Time allowed for the clean-up requests of a cancel (the evacuation's own signal is aborted). */
export const CLEANUP_MS = 30_000;

export async function unmarkEvicted(
  api: KubevirtApi,
  node: string,
  ours: ReadonlySet<string>,
  log: Logger,
  signal: AbortSignal,
): Promise<{ unmarked: string[]; stayMarked: string[] }> {
  const marked = (await api.listVmis(node, signal)).filter(
    (v) => v.status?.evacuationNodeName === node && ours.has(vmiKey(v)),
  );
  if (marked.length === 0) return { unmarked: [], stayMarked: [] };
  if (!(await api.canCancelEvacuation(signal))) {
    const stayMarked = marked.map(vmiKey);
    log.warn(
      { vmis: stayMarked },
      'this KubeVirt (before v1.7) cannot take an eviction mark back: it will migrate these VMIs again',
    );
    return { unmarked: [], stayMarked };
  }
  const unmarked: string[] = [];
  const stayMarked: string[] = [];
  for (const v of marked) {
    try {
      await api.cancelEvacuation(v.metadata.namespace ?? 'default', v.metadata.name, node, signal);
      unmarked.push(vmiKey(v));
    } catch (err) {
      // e.g. 400 while someone else's drain taint is still on the node
      log.warn({ err, vmi: vmiKey(v) }, 'KubeVirt refused to cancel the evacuation');
      stayMarked.push(vmiKey(v));
    }
  }
  if (unmarked.length) log.info({ vmis: unmarked }, 'evacuation cancelled in KubeVirt');
  return { unmarked, stayMarked };
}

/**
 * On a cancel with evacuation.abortOnCancel: take the drain taint back (while it stays, KubeVirt
 * starts the migrations again), take eviction marks back (KubeVirt v1.7+), then delete the
 * unfinished migrations of this node's VMIs: KubeVirt aborts a migration whose VMIM is deleted.
 * A shutdown or deadline aborts nothing.
 */
export async function abortOnCancel(
  api: KubevirtApi,
  node: NodeRef,
  evacuation: {
    readonly tracker: Tracker;
    readonly triggers: Triggers;
    readonly externals: readonly string[];
  },
  ctx: EvacuationContext,
): Promise<void> {
  const { tracker, triggers, externals } = evacuation;
  if (!ctx.abortOnCancel || !isCancelledError(ctx.signal.reason)) return;
  const signal = AbortSignal.timeout(CLEANUP_MS);
  try {
    await triggers.removeOurTaint(signal);
    const ours = new Set(tracker.pending());
    await unmarkEvicted(api, node.name, new Set([...ours, ...externals]), ctx.log, signal);
    const open = (await api.listMigrations(signal)).filter(
      (m) =>
        !['Succeeded', 'Failed'].includes(m.status?.phase ?? '') &&
        ours.has(`${m.metadata.namespace ?? 'default'}/${m.spec?.vmiName ?? ''}`),
    );
    for (const m of open) {
      ctx.log.warn(
        { vmi: m.spec?.vmiName, migration: m.metadata.name },
        'aborting the migration (evacuation.abortOnCancel)',
      );
      await api.deleteMigration(m.metadata.namespace ?? 'default', m.metadata.name, signal);
    }
  } catch (err) {
    ctx.log.warn({ err, node: node.name }, 'could not abort every migration on cancel');
  }
}
