// KubeVirt's capacity verdict: each migrating VMI's virt-launcher pod requests (cpu, memory, one
// pod slot) against the other Ready, schedulable nodes' allocatable minus the requests of the
// pods bound there, honouring taints/tolerations and the launcher's nodeSelector. Pod affinity,
// node affinity and topology spread are not looked at (said in every verdict).
import type { CapacityVerdict } from '../../core/backends/plugin.ts';
import { pack, type Bin, type Item } from '../capacity/pack.ts';
import { unlessUnavailable, verdictOf } from '../capacity/verdict.ts';
import { activeLauncher } from './pods.ts';
import type { KubevirtApi } from './port.ts';
import type { NodeView, PodSpecView, Resources, Taint, Toleration } from './views.ts';

export type { NodeView, PodSpecView, Toleration } from './views.ts';
import { parseQuantity } from './quantity.ts';

export const CAVEAT = 'affinity and topology spread not checked';

const MILLI = 1000;

/** cpu in millicores, memory in bytes, one pod: what the scheduler adds up for a pod. */
export function podRequests(pod: PodSpecView): Record<string, number> {
  const sum = (list: { resources?: Resources }[] | undefined, key: string) =>
    (list ?? []).reduce((a, c) => a + (parseQuantity(c.resources?.requests?.[key]) || 0), 0);
  const max = (list: { resources?: Resources }[] | undefined, key: string) =>
    Math.max(0, ...(list ?? []).map((c) => parseQuantity(c.resources?.requests?.[key]) || 0));
  const one = (key: string) =>
    Math.max(sum(pod.spec?.containers, key), max(pod.spec?.initContainers, key)) +
    (parseQuantity(pod.spec?.overhead?.[key]) || 0);
  return { cpu: Math.round(one('cpu') * MILLI), memory: one('memory'), pods: 1 };
}

const tolerates = (tolerations: readonly Toleration[], t: Taint): boolean =>
  tolerations.some(
    (x) =>
      (!x.effect || x.effect === t.effect) &&
      (x.operator === 'Exists'
        ? !x.key || x.key === t.key
        : x.key === t.key && (x.value ?? '') === (t.value ?? '')),
  );

const ready = (n: NodeView) =>
  (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

const active = (p: PodSpecView) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

/** Where the launcher may be scheduled: nodeSelector labels, and every hard taint tolerated. */
function allowedFor(launcher: PodSpecView, nodes: ReadonlyMap<string, NodeView>): (bin: Bin) => boolean {
  const selector = Object.entries(launcher.spec?.nodeSelector ?? {});
  const tolerations = launcher.spec?.tolerations ?? [];
  return (bin) => {
    const node = nodes.get(bin.name);
    if (!node) return false;
    const labels = node.metadata.labels ?? {};
    if (!selector.every(([k, v]) => labels[k] === v)) return false;
    return (node.spec?.taints ?? [])
      .filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')
      .every((t) => tolerates(tolerations, t));
  };
}

const describeKubevirt = (cls: string, n: number): string =>
  cls === 'cpu'
    ? `${Number((n / MILLI).toFixed(2))} CPU`
    : cls === 'memory'
      ? `${Number((n / 2 ** 30).toFixed(1))} GiB memory`
      : cls === 'pods'
        ? `${n} pod slot${n === 1 ? '' : 's'}`
        : `${n} ${cls}`;

export interface KubevirtCapacityInput {
  readonly node: string;
  /** The launcher pods of the VMIs that will migrate, with the VMI's name. */
  readonly launchers: readonly { readonly vmi: string; readonly pod: PodSpecView }[];
  readonly nodes: readonly NodeView[];
  /** Every pod of the cluster (the bound ones count against their node). */
  readonly pods: readonly PodSpecView[];
}

export function kubevirtCapacity(input: KubevirtCapacityInput): CapacityVerdict {
  const others = input.nodes.filter(
    (n) => n.metadata.name !== input.node && ready(n) && !n.spec?.unschedulable,
  );
  const byName = new Map(others.map((n) => [n.metadata.name, n]));
  const used = new Map<string, Record<string, number>>();
  for (const p of input.pods) {
    const at = p.spec?.nodeName;
    if (!at || !byName.has(at) || !active(p)) continue;
    const sum = used.get(at) ?? { cpu: 0, memory: 0, pods: 0 };
    for (const [k, v] of Object.entries(podRequests(p))) sum[k] = (sum[k] ?? 0) + v;
    used.set(at, sum);
  }
  const bins: Bin[] = others.map((n) => {
    const a = n.status?.allocatable ?? {};
    const u = used.get(n.metadata.name) ?? {};
    const alloc = {
      cpu: parseQuantity(a.cpu) * MILLI,
      memory: parseQuantity(a.memory),
      pods: parseQuantity(a.pods),
    };
    return {
      name: n.metadata.name,
      free: Object.fromEntries(
        Object.entries(alloc).map(([k, v]) => [k, (Number.isNaN(v) ? 0 : v) - (u[k] ?? 0)]),
      ),
    };
  });
  const items: Item[] = input.launchers.map(({ vmi, pod }) => ({
    id: vmi,
    name: vmi,
    needs: podRequests(pod),
    allowed: allowedFor(pod, byName),
  }));
  return verdictOf({
    plugin: 'kubevirt',
    noun: 'VMI',
    packing: pack(items, bins),
    hosts: bins.length,
    describe: describeKubevirt,
    caveat: CAVEAT,
  });
}

/** Reads what the verdict needs through the port; an API failure is an unknown capacity. */
export async function kubevirtVerdict(
  api: Pick<KubevirtApi, 'listNodes' | 'listActivePods'>,
  node: string,
  movers: readonly { readonly name: string; readonly uid: string | undefined }[],
  signal: AbortSignal,
): Promise<CapacityVerdict> {
  return unlessUnavailable(signal, async () => {
    const [nodes, pods] = await Promise.all([api.listNodes(signal), api.listActivePods(signal)]);
    const here = pods.filter((p) => p.spec?.nodeName === node);
    const launchers = movers.flatMap((m) => {
      const pod = activeLauncher(here, m.uid);
      return pod ? [{ vmi: m.name, pod }] : [];
    });
    return kubevirtCapacity({ node, launchers, nodes, pods });
  });
}
