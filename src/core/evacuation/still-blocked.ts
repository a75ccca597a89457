// The re-check of a node refused before any change for a workload that must move and cannot
// (EvacuationBlocked: a server whose way out keeps it on a host that no declared reboot lets it stay
// on, a locked one, a non-migratable VMI). It is looked at again at every resync, until its owner
// or an operator acts. While the same workloads still block it, that look is its plan alone: no
// record written, no fleet slot taken, no Event. Through the whole way the record said Queued and
// Evacuating for a moment at each resync, took a slot another node may have waited for, and a
// reader caught it there (chaos seed 460708: the soak's last look found hv-1 Evacuating).
import type { NodeRun } from '../agent/run-context.ts';
import { blockerGate } from '../preflight/blockers.ts';
import { errorText, firstAttempt } from '../record/record.ts';
import type { EvacuatedDesire } from '../agent/desired.ts';
import type { EvacuationControl } from './control.ts';
import { askPlans } from './plan.ts';

/**
 * True when the record's refusal stands as written: the evacuation is left Failed as it is. False
 * (anything changed: the blocker gone or another, another trigger, a plan that failed) takes the
 * whole way, which records what it finds.
 */
export async function stillBlocked(
  run: NodeRun,
  desired: EvacuatedDesire,
  ctl: EvacuationControl,
): Promise<boolean> {
  const rec = run.store.current;
  if (rec?.phase !== 'Failed' || rec.failureReason !== 'EvacuationBlocked') return false;
  if (rec.trigger !== desired.trigger || !firstAttempt(rec)) return false;
  try {
    const plans = await askPlans(run, ctl.signal);
    const refusal = blockerGate(run, { plans }, true);
    return refusal !== undefined && errorText(refusal) === rec.lastError;
  } catch {
    return false;
  }
}
