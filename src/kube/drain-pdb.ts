// Words for a 429 eviction: which PodDisruptionBudget blocks and its numbers. The API server names
// the budget in the Status causes; when a server leaves them out we look the budgets up ourselves.
import type { KubeTransport } from './http.ts';
import type { KubeList, KubeObject, KubePod, KubeStatus, PodRef } from './types.ts';

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Requirement[];
}

export interface Pdb extends KubeObject {
  spec?: { selector?: LabelSelector | null };
  status?: {
    currentHealthy?: number;
    desiredHealthy?: number;
    disruptionsAllowed?: number;
    expectedPods?: number;
    observedGeneration?: number;
  };
}

function requirementHolds(r: Requirement, labels: Record<string, string>): boolean {
  const v = labels[r.key];
  switch (r.operator) {
    case 'In':
      return v !== undefined && (r.values ?? []).includes(v);
    case 'NotIn':
      return v === undefined || !(r.values ?? []).includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    default:
      return false;
  }
}

/** policy/v1: a null selector matches nothing, an empty one matches every pod of the namespace. */
export function selectorMatches(
  selector: LabelSelector | null | undefined,
  labels: Record<string, string>,
): boolean {
  if (!selector) return false;
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([key, v]) => labels[key] === v);
  return byLabel && (selector.matchExpressions ?? []).every((r) => requirementHolds(r, labels));
}

const numbers = (p: Pdb): string => {
  const s = p.status ?? {};
  return `currentHealthy ${s.currentHealthy ?? '?'}, desiredHealthy ${s.desiredHealthy ?? '?'}, disruptionsAllowed ${
    s.disruptionsAllowed ?? '?'
  }, expectedPods ${s.expectedPods ?? '?'}`;
};

async function lookUpBudgets(
  k: KubeTransport,
  pod: KubePod,
  ns: string,
  signal: AbortSignal,
): Promise<string> {
  try {
    const list = await k.request<KubeList<Pdb>>({
      path: `/apis/policy/v1/namespaces/${encodeURIComponent(ns)}/poddisruptionbudgets`,
      signal,
    });
    const labels = pod.metadata.labels ?? {};
    const matching = list.items.filter((p) => selectorMatches(p.spec?.selector, labels));
    return matching
      .map((p) => `PodDisruptionBudget ${ns}/${p.metadata.name ?? ''} (${numbers(p)})`)
      .join('; ');
  } catch {
    return ''; // the message without budget names is still worth showing
  }
}

/** A stable sentence (identical across retries while nothing changes, so Events aggregate). */
export async function describeBlocked(
  k: KubeTransport,
  pod: KubePod,
  ref: PodRef,
  status: KubeStatus,
  signal: AbortSignal,
): Promise<string> {
  const causes = (status.details?.causes ?? []).map((c) => c.message).filter((m): m is string => !!m);
  const detail = causes.length ? causes.join('; ') : await lookUpBudgets(k, pod, ref.namespace, signal);
  const head = status.message ?? 'Cannot evict pod as it would violate the pod\u2019s disruption budget.';
  return `eviction of pod ${ref.namespace}/${ref.name} blocked: ${head}${detail ? ` ${detail}` : ''}`;
}
