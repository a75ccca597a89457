// Step 3 of design.md §1: cordon (for a NodeMaintenance or a host shutdown) and taint, the first change to the node.
import type { MaintenanceObject } from '../cluster/objects.ts';
import { EVACUATING_TAINT } from '../record/record.ts';
import type { NodeRun } from '../agent/run-context.ts';
import { isShutdownTrigger } from '../shutdown/mark.ts';

const hasOurTaint = (run: NodeRun): boolean =>
  (run.node.spec?.taints ?? []).some(
    (t) => t.key === EVACUATING_TAINT.key && t.effect === EVACUATING_TAINT.effect,
  );

/**
 * The first change to the node itself. Everything before (record, NodeMaintenance finalizer,
 * fleet slot, plan, capacity check) leaves the node as the operator left it, so a queued or
 * refused evacuation has nothing to undo. A NodeMaintenance on a schedulable node: we cordon
 * (and say so before doing it); then our taint keeps new pods away while the VMs move.
 */
export async function isolate(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  trigger?: string,
): Promise<void> {
  // a host shutdown (core/shutdown) cordons as a NodeMaintenance does: our cordon, undone after boot
  const ours =
    (nm !== undefined && run.deps.config.nodeMaintenance.mode === 'own') || isShutdownTrigger(trigger);
  const cordon = ours && run.node.spec?.unschedulable !== true;
  const taint = !hasOurTaint(run);
  if (!cordon && !taint) return;
  // one write: the record of the change and the change land together (or neither does)
  await run.store.update(
    { ...(cordon ? { cordonedByUs: true } : {}), ...(taint ? { taintedByUs: true } : {}) },
    { ...(cordon ? { cordon: true as const } : {}), ...(taint ? { taint: { ...EVACUATING_TAINT } } : {}) },
  );
}
