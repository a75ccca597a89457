// fleet.blockers.podSelector: a matching pod that has not finished on this node holds this node
// only (a backup Job, a storage rebuild). One list per check, narrowed by the API server to the
// node and the selector, so the answer is the few blocking pods, not the node's all.
import type { KubeClients } from '../../kube/client.ts';
import type { KubeList, KubePod } from '../../kube/types.ts';

export type PodBlocker = (node: string) => Promise<string[]>;

export function kubePodBlocker(k: KubeClients, selector: string): PodBlocker {
  return async (node) => {
    const list = await k.request<KubeList<KubePod>>({
      path: '/api/v1/pods',
      query: { fieldSelector: `spec.nodeName=${node}`, labelSelector: selector },
    });
    return list.items
      .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
      .map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`);
  };
}
