// What the node should be: Evacuated or InService. Pure, so the reconciler and the agent's
// cancel check agree and every rule is tested without a cluster.
import type { MaintenanceObject, NodeObject } from '../cluster/objects.ts';
import { timeOf } from '../cluster/objects.ts';
import { EVACUATING_TAINT, type NodeRecord } from '../record/record.ts';
import { IGNORE_LABEL, MIGRATION_MODE_KEY } from '../../names.ts';
import { migrationMode } from '../backends/node-policy.ts';
import { MACHINE_DELETING_ANNOTATION } from '../capi/machine.ts';
import { SHUTDOWN_ANNOTATION, SHUTDOWN_TRIGGER } from '../shutdown/mark.ts';
import type { NodeRun } from './run-context.ts';

/**
 * Why the node opts out (drainer.dev/ignore=true, or drainer.dev/migration-mode=skip), completing
 * "node N …"; undefined when it does not. drainer reports such a node and never starts evacuating it.
 */
export function optOutReason(node: NodeObject): string | undefined {
  if (node.metadata?.labels?.[IGNORE_LABEL] === 'true') return `is labelled ${IGNORE_LABEL}=true`;
  const m = migrationMode(node);
  return 'mode' in m && m.mode === 'skip' ? `has ${MIGRATION_MODE_KEY}=skip` : undefined;
}

export const optedOut = (node: NodeObject): boolean => optOutReason(node) !== undefined;

export type MaintenanceMode = 'own' | 'observe' | 'off';

/** Set on a NodeMaintenance when drainer takes it, naming the node it acted on (spec.nodeName is immutable). */
export const MAINTENANCE_NODE_ANNOTATION = 'drainer.dev/node';
export const MAINTENANCE_FINALIZER = 'drainer.dev/maintenance';

export type Desired =
  | { readonly state: 'Evacuated'; readonly trigger: string; readonly maintenance?: MaintenanceObject }
  | { readonly state: 'InService' };

/** The desire to evacuate, as the evacuation and its pre-checks take it. */
export type EvacuatedDesire = Extract<Desired, { state: 'Evacuated' }>;

export interface MaintenanceView {
  /** The NodeMaintenance that drives this node (the oldest valid one). */
  readonly active?: MaintenanceObject;
  /** Newer NodeMaintenances for the same node: Failed, "already exists". */
  readonly duplicates: readonly MaintenanceObject[];
  /** NodeMaintenances whose spec.nodeName no longer names the node drainer acted on. */
  readonly changed: readonly MaintenanceObject[];
}

const isDeleting = (nm: MaintenanceObject): boolean => nm.metadata?.deletionTimestamp !== undefined;
const actedOn = (nm: MaintenanceObject): string | undefined =>
  nm.metadata?.annotations?.[MAINTENANCE_NODE_ANNOTATION];

export const nodeNameChanged = (nm: MaintenanceObject): boolean => {
  const node = actedOn(nm);
  return node !== undefined && node !== nm.spec?.nodeName;
};

/** Sorts the NodeMaintenances of one node: the older wins (creation time, then name). */
export function viewMaintenances(nodeName: string, all: readonly MaintenanceObject[]): MaintenanceView {
  const changed = all.filter((nm) => nodeNameChanged(nm) && actedOn(nm) === nodeName);
  const candidates = all
    .filter((nm) => nm.spec?.nodeName === nodeName && !nodeNameChanged(nm) && !isDeleting(nm))
    .sort(
      (a, b) =>
        timeOf(a.metadata?.creationTimestamp) - timeOf(b.metadata?.creationTimestamp) ||
        (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
  const [active, ...duplicates] = candidates;
  return { ...(active ? { active } : {}), duplicates, changed };
}

/** Taints that never count as a trigger: drainer's own, and KubeVirt's default drain taint (ours too). */
export const NOT_TRIGGERS: ReadonlySet<string> = new Set([EVACUATING_TAINT.key, 'kubevirt.io/drain']);

/** The first of the trigger taint keys the node carries (a disruption taint: Karpenter, autoscaler). */
export function triggerTaint(node: NodeObject, keys: readonly string[]): string | undefined {
  const on = new Set((node.spec?.taints ?? []).map((t) => t.key));
  return keys.find((k) => on.has(k) && !NOT_TRIGGERS.has(k));
}

export const maintenanceTrigger = (nm: MaintenanceObject): string =>
  `NodeMaintenance/${nm.metadata?.name ?? ''}`;

/**
 * Evacuated when the node is unschedulable by someone else's hand, or (mode own) an active
 * NodeMaintenance names it. A cordon drainer made itself (record.cordonedByUs) is not a reason.
 */
export function desiredState(input: {
  nodeName: string;
  node: NodeObject;
  maintenances: readonly MaintenanceObject[];
  record: NodeRecord | undefined;
  mode: MaintenanceMode;
  /** triggers.taints: a node carrying one is evacuated as if cordoned (trigger "taint/<key>"). */
  taints?: readonly string[];
}): Desired {
  const { node, record, mode } = input;
  // the host is going down (logind, core/shutdown): first, as nothing waits for it (mark.ts says why)
  if (node.metadata?.annotations?.[SHUTDOWN_ANNOTATION] !== undefined)
    return { state: 'Evacuated', trigger: SHUTDOWN_TRIGGER };
  const cordonedByOthers = node.spec?.unschedulable === true && record?.cordonedByUs !== true;
  const view = mode === 'off' ? undefined : viewMaintenances(input.nodeName, input.maintenances);
  if (mode === 'own' && view?.active) {
    return { state: 'Evacuated', trigger: maintenanceTrigger(view.active), maintenance: view.active };
  }
  // Cluster API deletes the node's Machine and waits on drainer's pre-drain hook (core/capi)
  const machine = node.metadata?.annotations?.[MACHINE_DELETING_ANNOTATION];
  if (machine) return { state: 'Evacuated', trigger: `Machine/${machine}` };
  if (!cordonedByOthers) {
    const taint = triggerTaint(node, input.taints ?? []);
    return taint ? { state: 'Evacuated', trigger: `taint/${taint}` } : { state: 'InService' };
  }
  // observe: a NodeMaintenance operator cordoned the node; name it in the trigger, own nothing
  if (mode === 'observe' && view?.active)
    return { state: 'Evacuated', trigger: maintenanceTrigger(view.active) };
  return { state: 'Evacuated', trigger: 'cordon' };
}

/** What this pass's node should be, from what the pass read (its record as it stands now). */
export const desiredOf = (run: NodeRun): Desired =>
  desiredState({
    nodeName: run.nodeName,
    node: run.node,
    maintenances: run.maintenances,
    record: run.store.current,
    mode: run.deps.config.nodeMaintenance.mode,
    taints: run.deps.config.triggers?.taints ?? [],
  });
