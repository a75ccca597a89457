// The gate pod the demo shows: the node's own drainer-gate-<node>-<hash>, or the spare
// drainer-gate-<node>-<hash>-b that takes over while the other is being deleted (its finalizer keeps it
// until the VMs have left). The same choice as `drainer status` makes (core/gate/observe.ts).
import { effectivePod } from '../core/gate/observe.ts';
import { gateName, gatePodNames } from '../kube/gate.ts';
import type { KubeObject } from '../kube/types.ts';

/** Reads one pod of drainer's namespace by name (undefined: none). */
export type FindPod = (name: string) => KubeObject | undefined;

/** The gate pod that guards the node now, or undefined when the node has none. */
export const guardingGatePod = (node: string, find: FindPod): KubeObject | undefined =>
  effectivePod(gatePodNames(node).flatMap((name) => find(name) ?? []));

/** How the live view says who holds the drain: the spare is named, the node's own pod is "the gate". */
export function holderText(node: string, pod: KubeObject): string {
  const name = pod.metadata.name ?? '';
  return name === gateName(node) ? 'the gate' : `the gate (spare pod ${name} took over)`;
}
