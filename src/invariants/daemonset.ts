// Would a DaemonSet run a pod on this node? Its placement (src/kube/placement.ts) against the node's
// labels, unless it is being deleted. Used to tell whether a node's agent has a successor coming.
import { placesOn } from '../kube/placement.ts';
import type { WorldDaemonSet, WorldNode } from './world.ts';

/** Does the DaemonSet place a pod on the node (and is it not being deleted)? */
export function selectsNode(ds: WorldDaemonSet, node: Pick<WorldNode, 'labels'>): boolean {
  return !ds.deleting && placesOn(ds, node.labels);
}
