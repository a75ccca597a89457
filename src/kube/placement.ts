// Where a DaemonSet places its pods: its template's nodeSelector and required node affinity,
// matched against a node's labels as the scheduler does (taints are left out: drainer's agents
// tolerate the ones drainer and a drain put on). Tells whether a node's agent has a successor
// coming (the agent at its stop, `drainer release`, the invariants).
import type { KubeObject } from './types.ts';

export interface SelectorTerm {
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }[];
}

export interface Placement {
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (any one term matches). */
  readonly nodeSelectorTerms?: readonly SelectorTerm[];
}

type Expression = NonNullable<SelectorTerm['matchExpressions']>[number];

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

/** Would a pod of this placement be scheduled on a node with these labels? */
export function placesOn(p: Placement, labels: Readonly<Record<string, string>>): boolean {
  if (Object.entries(p.nodeSelector ?? {}).some(([k, v]) => labels[k] !== v)) return false;
  const terms = p.nodeSelectorTerms;
  // an empty list of terms matches no node; no required affinity matches every node
  if (!terms) return true;
  return terms.some((t) => (t.matchExpressions ?? []).every((e) => matches(e, labels)));
}

type DaemonSetObject = KubeObject & {
  spec?: {
    template?: {
      spec?: {
        nodeSelector?: Record<string, string>;
        affinity?: {
          nodeAffinity?: {
            requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: SelectorTerm[] };
          };
        };
      };
    };
  };
};

/** A DaemonSet's placement, from its pod template. */
export function placementOf(ds: KubeObject): Placement {
  const pod = (ds as DaemonSetObject).spec?.template?.spec;
  const terms =
    pod?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return {
    ...(pod?.nodeSelector ? { nodeSelector: pod.nodeSelector } : {}),
    ...(terms ? { nodeSelectorTerms: terms } : {}),
  };
}
