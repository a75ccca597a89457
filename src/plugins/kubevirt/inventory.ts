// What is on the node: its VMIs, each classified by how it leaves (migrate, notify, halt, external,
// blocked), sorted by key.
import type { KubevirtConfig } from '../../config/schema.ts';
import type { NodeRef } from '../../core/backends/plugin.ts';
import { classify, stillHere, type Classified } from './classify.ts';
import { MAINTENANCE_ANNOTATION, ownerVm, readPolicy } from './policy.ts';
import type { KubevirtApi } from './port.ts';
import type { ClusterSettings } from './types.ts';

export async function inventory(
  deps: { readonly api: KubevirtApi; readonly config: KubevirtConfig },
  node: NodeRef,
  settings: ClusterSettings,
  signal: AbortSignal,
): Promise<Classified[]> {
  const { api, config } = deps;
  const vmis = (await api.listVmis(node.name, signal)).filter(stillHere);
  const classified = await Promise.all(
    vmis.map(async (v) => {
      // drainer.dev/maintenance: the VMI's own annotation, else its VirtualMachine's (one GET)
      const vmName = ownerVm(v);
      const own = v.metadata.annotations?.[MAINTENANCE_ANNOTATION] !== undefined;
      const vm =
        vmName && !own ? await api.getVm(v.metadata.namespace ?? 'default', vmName, signal) : undefined;
      return classify(v, settings, config.nonMigratable, config.external, readPolicy(v, vm), vmName);
    }),
  );
  return classified.sort((a, b) => a.key.localeCompare(b.key));
}
