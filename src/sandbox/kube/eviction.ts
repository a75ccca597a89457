// The pods/eviction subresource (policy/v1 Eviction), following the real EvictionREST: terminal,
// pending or terminating pods are deleted without a PDB check; otherwise exactly one matching
// PodDisruptionBudget must allow a disruption, which the eviction consumes before deleting.
import { clone } from './clone.ts';
import { labelSelectorMatcher } from './selectors.ts';
import { badRequest, failure, forbidden, success, tooManyRequests } from './status.ts';
import type { ObjectStore } from './store.ts';
import { StatusError, type DeleteOptions, type KubeObject, type Status } from './types.ts';

/** Runs before the eviction logic (an admission webhook's place); a returned Status is the answer. */
export type EvictionHook = (pod: KubeObject, eviction: KubeObject) => Status | undefined;

const MAX_DISRUPTED_PODS = 2000;
const PDB = 'poddisruptionbudgets.policy';
const PDB_GR = { group: 'policy', plural: 'poddisruptionbudget' };

interface PdbStatus {
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  conditions?: {
    type: string;
    status: string;
    reason?: string;
    message?: string;
    lastTransitionTime?: string;
  }[];
}

const phaseOf = (pod: KubeObject): string | undefined =>
  (pod.status as { phase?: string } | undefined)?.phase;

function isReady(pod: KubeObject): boolean {
  const conds = (pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
  return conds?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function canIgnorePdb(pod: KubeObject): boolean {
  const phase = phaseOf(pod);
  return (
    phase === 'Succeeded' ||
    phase === 'Failed' ||
    phase === 'Pending' ||
    Boolean(pod.metadata.deletionTimestamp)
  );
}

function matchingPdbs(store: ObjectStore, pod: KubeObject): KubeObject[] {
  return store.listPage(PDB, { namespace: pod.metadata.namespace }).items.filter((pdb) => {
    // A nil or empty selector matches nothing (policy/v1).
    const m = labelSelectorMatcher((pdb.spec as { selector?: unknown } | undefined)?.selector);
    return m !== undefined && m(pod.metadata.labels);
  });
}

function stillProcessing(name: string): StatusError {
  return tooManyRequests(
    "Cannot evict pod as it would violate the pod's disruption budget.",
    [
      {
        reason: 'DisruptionBudget',
        message: `The disruption budget ${name} is still being processed by the server.`,
      },
    ],
    10,
  );
}

/** The stamp field of a pod's eviction time in its PDB's status.disruptedPods. */
export const disruptedAt = (podName: string): string => `status.disruptedPods.${podName}`;

/** Verifies the budget allows one more disruption and records it in the PDB's status. */
function checkAndDecrement(store: ObjectStore, pdb: KubeObject, podName: string, dryRun: boolean): void {
  const name = pdb.metadata.name ?? '';
  const st = (pdb.status ?? {}) as PdbStatus;
  if ((st.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw stillProcessing(name);
  const allowed = st.disruptionsAllowed ?? 0;
  if (allowed < 0) throw forbidden(PDB_GR, name, 'pdb disruptions allowed is negative');
  if (Object.keys(st.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
    throw forbidden(
      PDB_GR,
      name,
      'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
    );
  }
  if (allowed === 0) {
    throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [
      {
        reason: 'DisruptionBudget',
        message: `The disruption budget ${name} needs ${st.desiredHealthy ?? 0} healthy pods and has ${st.currentHealthy ?? 0} currently`,
      },
    ]);
  }
  if (dryRun) return;
  // the disruption controller weighs this stamp against its expiry: its moment is kept exactly
  const at = store.stamps.stamp(pdb.metadata.uid, disruptedAt(podName));
  const status: PdbStatus = {
    ...st,
    disruptionsAllowed: allowed - 1,
    disruptedPods: { ...st.disruptedPods, [podName]: at },
  };
  if (allowed - 1 === 0) {
    const others = (st.conditions ?? []).filter((c) => c.type !== 'DisruptionAllowed');
    status.conditions = [
      ...others,
      {
        type: 'DisruptionAllowed',
        status: 'False',
        reason: 'InsufficientPods',
        message: '',
        lastTransitionTime: at,
      },
    ];
  }
  store.updateStatus(PDB, { ...pdb, status });
}

/**
 * Evicts `namespace/name` as described by the Eviction `body`. Returns the Status to answer
 * (201 Success, or a Failure such as the 500 for several PDBs); throws StatusError for 404/429/….
 * A dry run answers the same after the same checks, and changes nothing.
 */
export function evict(
  store: ObjectStore,
  hooks: readonly EvictionHook[],
  namespace: string,
  name: string,
  body: KubeObject,
  dryRun = false,
): Status {
  if (body.metadata?.name !== undefined && body.metadata.name !== name) {
    throw badRequest('name in URL does not match name in Eviction object');
  }
  const pod = store.getRef('pods', namespace, name);
  // Hooks stand for admission webhooks with side effects (KubeVirt starts a migration): not on a dry run.
  for (const hook of dryRun ? [] : hooks) {
    const answer = hook(clone(pod), body);
    if (answer) return answer;
  }
  const deleteOptions = (body.deleteOptions ?? {}) as DeleteOptions;
  if (canIgnorePdb(pod)) {
    if (!dryRun) store.deleteRef('pods', namespace, name, deleteOptions);
    return success(201);
  }
  const pdbs = matchingPdbs(store, pod);
  if (pdbs.length > 1) {
    return failure(
      500,
      undefined,
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  }
  const pdb = pdbs[0];
  if (pdb) {
    const st = (pdb.status ?? {}) as PdbStatus;
    const desired = st.desiredHealthy ?? 0;
    // An unready pod does not count as healthy: evicting it costs the budget nothing.
    const unreadyButBudgetMet = !isReady(pod) && (st.currentHealthy ?? 0) >= desired && desired > 0;
    if (!unreadyButBudgetMet) checkAndDecrement(store, pdb, name, dryRun);
  }
  if (!dryRun) store.deleteRef('pods', namespace, name, deleteOptions);
  return success(201);
}
