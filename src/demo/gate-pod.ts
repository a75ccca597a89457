// The gate pod the demo shows: the node's own drainer-gate-<node>-<hash>, or a spare
// drainer-gate-<node>-<hash>-b (-b2 …) that takes over while the ones before are being deleted (their
// finalizer keeps them until the VMs have left). The same choice as `drainer status` makes (core/gate/observe.ts).
import { effectivePod } from '../core/gate/observe.ts';
import { gateName, isGatePodName } from '../kube/gate.ts';
import type { KubeObject } from '../kube/types.ts';

/** The gate pod that guards the node now, of the pods in drainer's namespace, or undefined when it has none. */
export const guardingGatePod = (node: string, pods: readonly KubeObject[]): KubeObject | undefined =>
  effectivePod(pods.filter((p) => isGatePodName(node, p.metadata.name ?? '')));

/** How the live view says who holds the drain: the spare is named, the node's own pod is "the gate". */
export function holderText(node: string, pod: KubeObject): string {
  const name = pod.metadata.name ?? '';
  return name === gateName(node) ? 'the gate' : `the gate (spare pod ${name} took over)`;
}
