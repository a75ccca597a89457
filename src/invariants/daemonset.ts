// Would a DaemonSet run a pod on this node? Its nodeSelector and its required node affinity, matched
// against the node's labels as the scheduler does (taints are left out: drainer's agents tolerate
// the ones drainer and a drain put on). Used to tell whether a node's agent has a successor coming.
import type { WorldDaemonSet, WorldNode, WorldSelectorTerm } from './world.ts';

type Expression = NonNullable<WorldSelectorTerm['matchExpressions']>[number];

function matches(e: Expression, labels: Readonly<Record<string, string>>): boolean {
  const v = labels[e.key];
  const values = e.values ?? [];
  switch (e.operator) {
    case 'In':
      return v !== undefined && values.includes(v);
    case 'NotIn':
      return v === undefined || !values.includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    case 'Gt':
    case 'Lt': {
      const n = Number(v);
      const bound = Number(values[0]);
      if (v === undefined || !Number.isInteger(n) || !Number.isInteger(bound)) return false;
      return e.operator === 'Gt' ? n > bound : n < bound;
    }
    default:
      return false;
  }
}

/** Does the DaemonSet place a pod on the node (and is it not being deleted)? */
export function selectsNode(ds: WorldDaemonSet, node: Pick<WorldNode, 'labels'>): boolean {
  if (ds.deleting) return false;
  const labels = node.labels;
  if (Object.entries(ds.nodeSelector ?? {}).some(([k, v]) => labels[k] !== v)) return false;
  const terms = ds.nodeSelectorTerms;
  // an empty list of terms matches no node; no required affinity matches every node
  if (!terms) return true;
  return terms.some((t) => (t.matchExpressions ?? []).every((e) => matches(e, labels)));
}
