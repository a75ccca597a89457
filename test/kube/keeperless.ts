// A node no agent keeps: drainer's DaemonSet with the runbook's affinity (no agent pod on a node
// labelled drainer.dev/agent=disabled), and the drain gate's objects of a node as the API server
// lists them.
import { gateSelector, pdbsPath, podsPath } from '../../src/kube/gate.ts';
import type { KubeList, KubeObject } from '../../src/kube/types.ts';
import type { KubeFixture } from './sandbox.ts';

/** The agent DaemonSet `drainer`; `podSpec` adds to its pod template's spec (a nodeSelector). */
export const agentDaemonSet = (podSpec: Record<string, unknown> = {}) => ({
  metadata: { name: 'drainer' },
  spec: {
    selector: { matchLabels: { app: 'drainer' } },
    template: {
      metadata: { labels: { app: 'drainer' } },
      spec: {
        containers: [{ name: 'agent', image: 'drainer' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'drainer.dev/agent', operator: 'NotIn', values: ['disabled'] }] },
              ],
            },
          },
        },
        ...podSpec,
      },
    },
  },
});

/** The names of the node's gate pod and PDB in `namespace`. */
export async function gateObjects(
  fx: KubeFixture,
  node: string,
  namespace: string,
): Promise<(string | undefined)[]> {
  const query = { labelSelector: gateSelector(node) };
  const lists = await Promise.all(
    [podsPath(namespace), pdbsPath(namespace)].map((path) =>
      fx.k.request<KubeList<KubeObject>>({ path, query }),
    ),
  );
  return lists.flatMap((l) => l.items.map((o) => o.metadata.name));
}
