// Cancel with evacuation.abortOnCancel, for VMIs a launcher-pod eviction marked
// (status.evacuationNodeName): from KubeVirt v1.7 the mark is taken back with
// PUT …/evacuate/cancel, which KubeVirt refuses while the drain taint is on (so it runs after the
// taint is removed). Older KubeVirt serves no such subresource (found by discovery, not by version
// guess): the mark stays, KubeVirt will migrate the VMI again, and drainer says so.
import type { Logger } from '../../observability/logger.ts';
import { vmiKey } from './classify.ts';
import type { KubevirtApi } from './port.ts';

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
