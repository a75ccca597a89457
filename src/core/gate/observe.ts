// What a node's drain gate is, as the API server shows it. Held means: the PDB is observed by the
// disruption controller and allows no disruption, and the gate pod is Running and Ready on the
// node, not being deleted (an eviction of a pod that is not Running skips every PDB, and Karpenter
// stops waiting for a pod stuck terminating after a minute). Anything else is "not held: <why>".
import { GATE_FINALIZER, gatePdbSpec } from '../../kube/gate.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { GateObjects } from './api.ts';

export interface GateSeen {
  readonly held: boolean;
  /** `held`, `released`, or `not held: <why>`. */
  readonly text: string;
  /** Not a start under way: the gate will not hold by itself (image not pullable, pod failed, deleted …). */
  readonly lasting: boolean;
}

interface PodStatus {
  phase?: string;
  conditions?: { type: string; status: string }[];
  containerStatuses?: { state?: { waiting?: { reason?: string; message?: string } } }[];
}

/** Container states that do not pass by themselves. */
const STUCK = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'ErrImageNeverPull',
  'InvalidImageName',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

/** Of a node's gate pods (its own and the spare), the one that guards: one not being deleted, if any. */
export const effectivePod = (pods: readonly KubeObject[]): KubeObject | undefined =>
  pods.find((p) => !p.metadata.deletionTimestamp) ?? pods.find(hasGateFinalizer) ?? pods[0];

export function hasGateFinalizer(pod: KubeObject): boolean {
  return (pod.metadata.finalizers ?? []).includes(GATE_FINALIZER);
}

const short = (text: string): string => (text.length > 160 ? `${text.slice(0, 157)}...` : text);

interface Why {
  readonly why: string;
  readonly lasting: boolean;
}

function podWhy(node: string, pod: KubeObject | undefined): Why | undefined {
  if (!pod) return { why: 'its pod does not exist', lasting: false };
  if (pod.metadata.deletionTimestamp)
    return {
      why: hasGateFinalizer(pod)
        ? 'its pod is being deleted (its finalizer keeps drains that delete or evict it waiting until the VMs have left)'
        : 'its pod is being deleted',
      lasting: true,
    };
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  if (nodeName !== node) return { why: `its pod is bound to ${nodeName ?? 'no node'}`, lasting: true };
  const st = (pod.status ?? {}) as PodStatus;
  const phase = st.phase ?? 'Pending';
  const waiting = st.containerStatuses?.map((c) => c.state?.waiting).find((w) => w?.reason);
  const detail = waiting ? ` (${waiting.reason}${waiting.message ? `: ${short(waiting.message)}` : ''})` : '';
  const stuck = waiting?.reason !== undefined && STUCK.has(waiting.reason);
  if (phase !== 'Running')
    return {
      why: `its pod is ${phase}${detail}`,
      lasting: stuck || phase === 'Failed' || phase === 'Succeeded',
    };
  const ready = st.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return ready ? undefined : { why: `its pod is Running but not Ready${detail}`, lasting: stuck };
}

/** JSON with every object's keys sorted: Go writes maps (matchLabels) in key order, not ours. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );

const sameSpec = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b);

/** Has someone changed the PDB's budget or selector? */
export function pdbAltered(node: string, pdb: KubeObject): boolean {
  const spec = (pdb.spec ?? {}) as { minAvailable?: unknown; maxUnavailable?: unknown; selector?: unknown };
  const want = gatePdbSpec(node);
  return (
    spec.minAvailable !== want.minAvailable ||
    spec.maxUnavailable !== undefined ||
    !sameSpec(spec.selector, want.selector)
  );
}

function pdbWhy(node: string, pdb: KubeObject | undefined): Why | undefined {
  if (!pdb) return { why: 'its PodDisruptionBudget does not exist', lasting: false };
  if (pdb.metadata.deletionTimestamp)
    return { why: 'its PodDisruptionBudget is being deleted', lasting: true };
  if (pdbAltered(node, pdb)) return { why: 'its PodDisruptionBudget was altered', lasting: false };
  const st = (pdb.status ?? {}) as { observedGeneration?: number; disruptionsAllowed?: number };
  if (st.observedGeneration === undefined || st.observedGeneration < (pdb.metadata.generation ?? 0))
    return { why: 'its PodDisruptionBudget is not observed yet', lasting: false };
  const allowed = st.disruptionsAllowed ?? 0;
  if (allowed !== 0)
    return {
      why: `its PodDisruptionBudget allows ${allowed} disruption${allowed === 1 ? '' : 's'}`,
      lasting: false,
    };
  return undefined;
}

/** The gate as the API server shows it, when it should hold. */
export function seeHeld(node: string, o: GateObjects): GateSeen {
  // the pod first: its trouble (an image that cannot be pulled) is what an operator has to fix
  const why = podWhy(node, o.pod) ?? pdbWhy(node, o.pdb);
  return why ? { held: false, text: `not held: ${why.why}`, lasting: why.lasting } : HELD;
}

const HELD: GateSeen = { held: true, text: 'held', lasting: false };

/** Open: no gate pod, or one going that no finalizer keeps, and nothing left under an older version's names. */
export const isOpen = (o: GateObjects): boolean =>
  (!o.pod || (o.pod.metadata.deletionTimestamp !== undefined && !hasGateFinalizer(o.pod))) &&
  !o.legacy?.length;

export const RELEASED: GateSeen = { held: false, text: 'released', lasting: false };
