// How an evacuation ends short of done: failed (record, metrics, Event, NodeMaintenance status,
// next try) or stopped (cancelled, shut down, or the fleet slot lost).
import { explainHeld } from '../gate/step.ts';
import { maintenanceStatus } from '../maintenance/maintenance-status.ts';
import { writeMaintenanceStatus } from '../maintenance/maintenance-sync.ts';
import type { MaintenanceObject } from '../cluster/objects.ts';
import type { RunResult } from '../agent/queue.ts';
import { errorText } from '../record/record.ts';
import { retryDelayMs } from '../agent/retry-backoff.ts';
import type { NodeRun } from '../agent/run-context.ts';
import type { EvacuationControl } from './control.ts';
import { nmRef, podCounts } from './maintenance.ts';

export const seconds = (run: NodeRun, since: Date): number => (run.now().getTime() - since.getTime()) / 1000;

const FAILURE_MESSAGE = {
  EvacuationFailed: 'evacuation failed',
  InsufficientCapacity: 'not enough capacity elsewhere',
  EvacuationBlocked: 'a workload that must move cannot; nothing was changed',
  CloudAuthFailed: "the cloud rejected drainer's credentials",
} as const;

export async function fail(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  started: Date,
  message: string,
  reason:
    | 'EvacuationFailed'
    | 'InsufficientCapacity'
    | 'EvacuationBlocked'
    | 'CloudAuthFailed' = 'EvacuationFailed',
): Promise<RunResult> {
  const text = errorText(message);
  const named = reason === 'EvacuationFailed' ? {} : { failureReason: reason };
  const failures = reason === 'EvacuationFailed' ? (run.store.current?.failures ?? 0) + 1 : undefined;
  await run.store.update({
    phase: 'Failed',
    lastError: text,
    attemptedAt: run.now().toISOString(),
    failures,
    ...named,
  });
  run.deps.metrics?.phase('Failed');
  run.deps.metrics?.evacuationFinished('failed', seconds(run, started));
  run.log.error({ node: run.nodeName }, `evacuation failed: ${text}`);
  const wait = retryDelayMs({ failures, ...named }, run.deps.config.resyncInterval);
  const next = new Date(run.now().getTime() + wait).toISOString();
  // a named refusal is re-checked every resync; a failure backs off, and says until when
  const when = failures ? `; next try at ${next} (in ${wait / 1000} s)` : '';
  await run.event('Warning', reason, `${text}${when}`, nmRef(nm));
  await explainHeld(run, `evacuation ${reason === 'EvacuationFailed' ? 'Failed' : reason}: ${text}`);
  await writeMaintenanceStatus(
    run,
    nm,
    maintenanceStatus({
      phase: 'Failed',
      reason,
      message: FAILURE_MESSAGE[reason],
      now: run.now(),
      lastError: text,
      pods: podCounts(run.store.current),
    }),
  );
  return { requeueAfterMs: wait };
}

/** Cancelled (desired changed) or shut down: the record stays as it is, to be restored or resumed. */
export function stopped(run: NodeRun, ctl: EvacuationControl, started: Date): RunResult {
  if (ctl.cancelled()) {
    run.log.info({ node: run.nodeName }, 'evacuation cancelled');
    run.deps.metrics?.evacuationFinished('cancelled', seconds(run, started));
    return { requeueAfterMs: 0 };
  }
  if (ctl.lostSlot?.() && !run.signal.aborted) {
    run.log.warn({ node: run.nodeName }, 'lost the fleet slot: the evacuation stops here and queues again');
    return {};
  }
  run.log.info(
    { node: run.nodeName },
    'evacuation interrupted by shutdown; the record stays for the next agent',
  );
  return {};
}
