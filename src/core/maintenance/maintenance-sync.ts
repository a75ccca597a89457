// NodeMaintenance bookkeeping in mode "own": take the active CR (finalizer + the node it names),
// write its status, mark invalid CRs Failed, and let go of CRs drainer no longer acts on.
import { isConflictError, isNotFoundError } from '../../errors.ts';
import {
  MAINTENANCE_FINALIZER,
  MAINTENANCE_NODE_ANNOTATION,
  nodeNameChanged,
  type MaintenanceView,
} from '../agent/desired.ts';
import type { Cluster } from '../cluster/cluster.ts';
import { alreadyFailedWith, invalidMaintenance } from './maintenance-status.ts';
import type { MaintenanceObject, MaintenanceStatus } from '../cluster/objects.ts';
import { maintenanceRef } from '../cluster/objects.ts';
import type { NodeRun } from '../agent/run-context.ts';

const owns = (run: NodeRun): boolean => run.deps.config.nodeMaintenance.mode === 'own';
const nameOf = (nm: MaintenanceObject): string => nm.metadata?.name ?? '';
const crKey = (nm: MaintenanceObject): string => `${nm.apiVersion ?? ''}/${nameOf(nm)}`;
const sameCr = (a: MaintenanceObject, b: { name: string; uid?: string | undefined }): boolean =>
  nameOf(a) === b.name && (b.uid === undefined || a.metadata?.uid === b.uid);

export const heldBy = (nm: MaintenanceObject, nodeName: string): boolean =>
  (nm.metadata?.finalizers ?? []).includes(MAINTENANCE_FINALIZER) &&
  nm.metadata?.annotations?.[MAINTENANCE_NODE_ANNOTATION] === nodeName;

/** Ignores a CR that vanished or changed under us: the next reconcile sees the new state. */
async function tolerant(write: () => Promise<void>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (err) {
    if (isNotFoundError(err) || isConflictError(err)) return false;
    throw err;
  }
}

/** Marks duplicates and CRs with a changed nodeName Failed (once; the status says when it is done). */
export async function markInvalid(run: NodeRun, view: MaintenanceView): Promise<void> {
  if (!owns(run)) return;
  const now = run.now();
  const oldest = view.active ? nameOf(view.active) : undefined;
  for (const nm of view.duplicates) {
    const message = `a NodeMaintenance for node ${run.nodeName} already exists${oldest ? ` (${oldest})` : ''}`;
    await failInvalid(run, nm, 'InvalidDuplicate', message, now);
  }
  for (const nm of view.changed) {
    const message = `spec.nodeName changed from ${run.nodeName} to ${nm.spec?.nodeName ?? '""'}; nodeName is immutable`;
    await failInvalid(run, nm, 'InvalidNodeNameChanged', message, now);
  }
}

async function failInvalid(
  run: NodeRun,
  nm: MaintenanceObject,
  reason: 'InvalidDuplicate' | 'InvalidNodeNameChanged',
  message: string,
  now: Date,
): Promise<void> {
  if (alreadyFailedWith(nm.status, message)) return;
  const rv = nm.metadata?.resourceVersion;
  const wrote = await tolerant(() =>
    run.deps.cluster.patchMaintenanceStatus(
      nm,
      invalidMaintenance(reason, message, now),
      rv ? { resourceVersion: rv } : undefined,
    ),
  );
  if (wrote) {
    run.log.warn({ nodeMaintenance: nameOf(nm), reason }, message);
    await run.event('Warning', 'MaintenanceInvalid', message, maintenanceRef(nm));
  }
}

/**
 * A NodeMaintenance naming a node that does not exist belongs to no agent, so any agent marks it.
 * The write is guarded by resourceVersion: one agent wins, the others get 409 and see it done.
 */
export async function markOrphan(
  cluster: Cluster,
  nm: MaintenanceObject,
  now: Date,
): Promise<'marked' | 'valid' | 'done'> {
  const target = nm.spec?.nodeName ?? '';
  if (nm.metadata?.deletionTimestamp !== undefined || nodeNameChanged(nm)) return 'valid';
  const message = `node ${target || '""'} does not exist`;
  if (alreadyFailedWith(nm.status, message)) return 'done';
  if (target && (await cluster.getNode(target))) return 'valid';
  const rv = nm.metadata?.resourceVersion;
  const status = invalidMaintenance('InvalidNodeNotFound', message, now);
  const wrote = await tolerant(() =>
    cluster.patchMaintenanceStatus(nm, status, rv ? { resourceVersion: rv } : undefined),
  );
  if (wrote)
    await cluster.event(maintenanceRef(nm), 'Warning', 'MaintenanceInvalid', message).catch(() => undefined);
  return wrote ? 'marked' : 'done';
}

/** Takes the active CR: finalizer plus the node it names (so a later nodeName change is seen), in the record first. */
export async function takeMaintenance(run: NodeRun, nm: MaintenanceObject): Promise<void> {
  if (!owns(run)) return;
  const rec = run.store.current;
  const ref = {
    name: nameOf(nm),
    apiVersion: nm.apiVersion ?? '',
    ...(nm.metadata?.uid ? { uid: nm.metadata.uid } : {}),
  };
  if (rec && (!rec.maintenance || !sameCr(nm, rec.maintenance))) await run.store.update({ maintenance: ref });
  if (heldBy(nm, run.nodeName)) return;
  await tolerant(() =>
    run.deps.cluster.addMaintenanceFinalizer(nm, MAINTENANCE_FINALIZER, {
      [MAINTENANCE_NODE_ANNOTATION]: run.nodeName,
    }),
  );
}

/**
 * Writes the status of the CR (mode own only). `decided`: the write follows from the CR's own status
 * as read, so it is guarded by that resourceVersion: a view older than our last write (the agent's
 * watch may lag it) never overwrites it.
 */
export async function writeMaintenanceStatus(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  status: MaintenanceStatus,
  decided = false,
): Promise<void> {
  if (!nm || !owns(run)) return;
  const rv = decided ? nm.metadata?.resourceVersion : undefined;
  await tolerant(() =>
    run.deps.cluster.patchMaintenanceStatus(nm, status, rv ? { resourceVersion: rv } : undefined),
  );
}

/** Drops our finalizer from every CR we hold except `keep` (after a restore, or when a cordon keeps the node out). */
export async function releaseMaintenances(run: NodeRun, keep?: MaintenanceObject): Promise<void> {
  for (const nm of run.maintenances) {
    if (!heldBy(nm, run.nodeName) || (keep && crKey(keep) === crKey(nm))) continue;
    await tolerant(() => run.deps.cluster.removeMaintenanceFinalizer(nm, MAINTENANCE_FINALIZER));
    run.log.info({ nodeMaintenance: nameOf(nm) }, 'released NodeMaintenance');
  }
}
