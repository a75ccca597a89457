// A tiny scheduler: the schedulable node with the fewest pods of the same owner (spreads replicas).
import type { KubeObject } from '../kube/types.ts';
import { RES, type StoreLike } from './store.ts';
import { isActive, podNode, schedulable, type Toleration } from './util.ts';

export function pickNode(
  store: StoreLike,
  opts: { tolerations?: Toleration[]; siblings?: readonly KubeObject[]; exclude?: readonly string[] },
): string | undefined {
  const counts = new Map<string, number>();
  for (const p of opts.siblings ?? []) {
    const n = podNode(p);
    if (n && isActive(p)) counts.set(n, (counts.get(n) ?? 0) + 1);
  }
  const candidates = store
    .list(RES.nodes)
    .filter((n) => schedulable(n, opts.tolerations) && !opts.exclude?.includes(n.metadata.name ?? ''))
    .map((n) => n.metadata.name ?? '')
    .sort((a, b) => (counts.get(a) ?? 0) - (counts.get(b) ?? 0) || a.localeCompare(b));
  return candidates[0];
}

export const tolerationsOf = (pod: KubeObject): Toleration[] =>
  (pod.spec as { tolerations?: Toleration[] } | undefined)?.tolerations ?? [];
