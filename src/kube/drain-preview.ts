// What the pod drain would do on a node, without evicting anything: kubectl's filters as the
// drain applies them (drain-filters.ts), and the PodDisruptionBudgets that would hold an eviction
// now (disruptionsAllowed 0). `drainer plan` shows this; the drain itself never calls it.
import type { DrainConfig } from '../config/schema.ts';
import type { KubeClients } from './client.ts';
import { classifyPod } from './drain-filters.ts';
import { type Pdb, selectorMatches } from './drain-pdb.ts';
import { podKey, podRef, type KubePod } from './types.ts';
import { listAll } from './watch.ts';

export interface DrainPreview {
  /** Pods the drain would evict. */
  readonly evict: number;
  readonly ignored: number;
  /** Pods that fail the whole drain before anything is evicted (kubectl's fatal filters). */
  readonly refused: readonly { pod: string; reason: string }[];
  /** Pods whose eviction a budget answers 429 right now: the drain waits for them. */
  readonly held: readonly { pod: string; budget: string }[];
}

export interface DrainPreviewOptions {
  readonly node: string;
  readonly config: Pick<DrainConfig, 'deleteEmptyDirData' | 'force' | 'podSelector'>;
  /** Pods a plugin takes care of (e.g. virt-launcher pods): the reason to leave them alone. */
  readonly skipPod?: (pod: KubePod) => string | undefined;
  readonly signal: AbortSignal;
}

export async function previewDrain(k: KubeClients, o: DrainPreviewOptions): Promise<DrainPreview> {
  const query = {
    fieldSelector: `spec.nodeName=${o.node}`,
    labelSelector: o.config.podSelector || undefined,
  };
  const { items } = await listAll<KubePod>(k, { path: '/api/v1/pods', query, signal: o.signal });
  const evict: KubePod[] = [];
  const refused: { pod: string; reason: string }[] = [];
  let ignored = 0;
  for (const pod of items) {
    const d = await classifyPod(pod, { k, config: o.config, skipPod: o.skipPod, signal: o.signal });
    if (d.action === 'evict') evict.push(pod);
    else if (d.action === 'error') refused.push({ pod: podKey(podRef(pod)), reason: d.reason });
    else ignored++;
  }
  return { evict: evict.length, ignored, refused, held: await heldByBudgets(k, evict, o.signal) };
}

/** Budgets (one list per namespace) that allow no disruption now, matched to the pods they hold. */
async function heldByBudgets(
  k: KubeClients,
  pods: readonly KubePod[],
  signal: AbortSignal,
): Promise<{ pod: string; budget: string }[]> {
  const namespaces = [...new Set(pods.map((p) => p.metadata.namespace ?? 'default'))];
  const budgets = new Map<string, Pdb[]>();
  await Promise.all(
    namespaces.map(async (ns) => {
      const path = `/apis/policy/v1/namespaces/${encodeURIComponent(ns)}/poddisruptionbudgets`;
      budgets.set(ns, (await listAll<Pdb>(k, { path, signal })).items);
    }),
  );
  return pods.flatMap((pod) => {
    const ns = pod.metadata.namespace ?? 'default';
    const labels = pod.metadata.labels ?? {};
    const holding = (budgets.get(ns) ?? []).filter(
      (b) => (b.status?.disruptionsAllowed ?? 0) === 0 && selectorMatches(b.spec?.selector, labels),
    );
    return holding.map((b) => ({
      pod: podKey(podRef(pod)),
      budget: `PodDisruptionBudget ${ns}/${b.metadata.name ?? ''} allows no disruption now`,
    }));
  });
}
