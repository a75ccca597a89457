// A Node deleted and registered again (Karpenter, Cluster API, a re-installed kubelet): the old
// object goes with its annotations (drainer's record), and the new one has the same name and
// labels, no annotations, and is schedulable.
import type { KubeNode } from '../../src/kube/types.ts';
import { until, type Stack } from './stack.ts';

/** Deletes the Node and waits until it is gone; answers it as it was. */
export async function deleteNode(s: Stack, name: string): Promise<KubeNode> {
  const before = await s.node(name);
  await s.k.request({ method: 'DELETE', path: `/api/v1/nodes/${name}` });
  await until('node gone', async () => !(await s.node(name).catch(() => undefined)));
  return before;
}

/** The Node as a re-installed kubelet registers it. */
export const registerAgain = (s: Stack, old: KubeNode) =>
  s.k.request({
    method: 'POST',
    path: '/api/v1/nodes',
    body: {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: old.metadata.name, labels: old.metadata.labels ?? {} },
      spec: {},
      status: old.status,
    },
  });
