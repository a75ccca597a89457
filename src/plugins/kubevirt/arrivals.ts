// The end of an evacuation: VMIs that came onto the node while the ones listed at its start moved
// (another node's migration landing here, its target pod scheduled before the node was tainted or
// cordoned). The node is not empty then: the outcome fails, the gate holds, the next attempt moves them.
import { stillHere, vmiKey, type Classified } from './classify.ts';
import { landingPods, podRef } from './pods.ts';
import type { KubevirtApi } from './port.ts';
import type { PodLite } from './types.ts';

/** What came, one line each (empty: nothing). */
export async function arrivals(
  api: Pick<KubevirtApi, 'listVmis'>,
  node: string,
  listed: readonly Classified[],
  pods: readonly PodLite[],
  signal: AbortSignal,
): Promise<string[]> {
  const known = new Set(listed.flatMap((c) => c.vmi.metadata.uid ?? []));
  const now = (await api.listVmis(node, signal)).filter(stillHere);
  const landed = now.filter((v) => !known.has(v.metadata.uid ?? ''));
  const here = new Set([...known, ...now.flatMap((v) => v.metadata.uid ?? [])]);
  return [
    ...landed.map(
      (v) => `${vmiKey(v)} came onto node ${node} during the evacuation (another node's migration)`,
    ),
    ...landingPods(pods, here).map(
      (p) =>
        `a VMI is migrating onto node ${node} (its target pod ${podRef(p).namespace}/${p.metadata.name}, scheduled before the node was tainted)`,
    ),
  ];
}
