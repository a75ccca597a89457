// The drain gate's objects of a node (its pod and PDB) as the API server lists them.
import { gateSelector, pdbsPath, podsPath } from '../../src/kube/gate.ts';
import type { KubeList, KubeObject } from '../../src/kube/types.ts';
import type { KubeFixture } from './sandbox.ts';

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
