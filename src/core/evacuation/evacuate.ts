// The evacuation steps of design.md §1: record intent and take the NodeMaintenance, wait for a
// fleet slot, plan, check capacity, then cordon (for a NodeMaintenance) and taint, run the plugins
// under the deadline, drain, record done. Each step past the intent lives in evacuation/.
import { isAuthError } from '../../errors.ts';
import { blockerGate } from '../preflight/blockers.ts';
import { capacityGate } from '../preflight/capacity.ts';
import type { EvacuatedDesire } from '../agent/desired.ts';
import { evacuatedMaintenance } from '../maintenance/maintenance-status.ts';
import { takeMaintenance, writeMaintenanceStatus } from '../maintenance/maintenance-sync.ts';
import { nodeRef } from '../backends/node-policy.ts';
import { giveBack, serverNow, takeSlot, withSlot } from '../fleet/step.ts';
import type { Slot } from '../fleet/types.ts';
import { ProgressEvents } from '../backends/progress-events.ts';
import { ProgressRecord } from '../record/progress-record.ts';
import { firstAttempt } from '../record/record.ts';
import type { NodeRun } from '../agent/run-context.ts';
import type { RunResult } from '../agent/queue.ts';
import { explainEvacuated, explainHeld, stillOnHost, toMove } from '../gate/step.ts';
import { attemptRecord } from './attempt.ts';
import { unlessStopped, type EvacuationControl } from './control.ts';
import { drainPods } from './drain-pods.ts';
import { fail, seconds, stopped } from './end.ts';
import { isolate } from './isolate.ts';
import { nmRef, podCounts, running } from './maintenance.ts';
import { failureText, summarize } from './outcomes.ts';
import { plan, type Planned } from './plan.ts';
import { stillBlocked } from './still-blocked.ts';

export type { EvacuatedDesire };

export async function evacuate(
  run: NodeRun,
  desired: EvacuatedDesire,
  ctl: EvacuationControl,
): Promise<RunResult> {
  // a refusal that stands is left as it is, with nothing written (still-blocked.ts)
  if (await stillBlocked(run, desired, ctl)) return { requeueAfterMs: run.deps.config.resyncInterval * 1000 };
  const started = run.now();
  const fresh = firstAttempt(run.store.current);
  // Without a fleet budget nothing waits between the intent and the plan, and the plan only reads:
  // it goes beside the intent write (the record must come before a change, not before a read).
  // With a budget the plan waits for the slot, so it does not go stale in the queue.
  // So does a start gate (windows, freezes, blockers): the node waits Queued behind it.
  const queue = run.deps.budget !== undefined || run.deps.startGate !== undefined;
  const early = queue ? undefined : plan(run, ctl, fresh);
  await recordIntent(run, desired, started, queue);
  // 1b. a fleet slot before the first change; given back on every way out below
  const slot = await takeSlot(run, desired.maintenance, ctl);
  if (slot === null) return stopped(run, ctl, started);
  try {
    const planned = await (early ?? plan(run, withSlot(ctl, slot), fresh));
    const result = await evacuateHolding(run, desired, withSlot(ctl, slot), started, fresh, planned);
    // the lost slot was logged where the evacuation stopped
    if (slot?.lost.aborted && !ctl.signal.aborted && run.store.current?.phase === 'Evacuating')
      return { requeueAfterMs: 0 };
    return result;
  } finally {
    await leaveSlot(run, ctl, slot ?? undefined);
  }
}

/**
 * The slot goes to the next node only once the record no longer says Evacuating, so no moment
 * shows more nodes Evacuating than the budget has slots (issue 48 item 5). A cancel (the node back
 * in service) makes the restore's first write (phase Restoring) here; any other way out still
 * Evacuating (an API error thrown, say in the pod drain after the VMs left) waits Queued again, in
 * its place, and resumes. Not written: the slot is left to expire. A slot lost to another node is
 * no longer ours to give: the record says Queued at once, beside the node that holds it now. A
 * shutdown keeps both for the next agent.
 */
async function leaveSlot(run: NodeRun, ctl: EvacuationControl, slot: Slot | undefined): Promise<void> {
  if (slot && !run.signal.aborted && run.store.current?.phase === 'Evacuating') {
    const cancelled = ctl.cancelled();
    const phase = cancelled ? 'Restoring' : 'Queued';
    try {
      await run.store.update(cancelled ? { phase } : { phase, resumes: true, slot: undefined });
      run.deps.metrics?.phase(phase);
    } catch (err) {
      run.log.warn({ err }, `record not marked ${phase}; the fleet slot is left to expire`);
      slot.abandon();
      return;
    }
  }
  await giveBack(run, slot);
}

async function evacuateHolding(
  run: NodeRun,
  desired: EvacuatedDesire,
  ctl: EvacuationControl,
  started: Date,
  fresh: boolean,
  planned: Planned | undefined,
): Promise<RunResult> {
  const { host, config, metrics } = run.deps;
  const nm = desired.maintenance;
  if (!planned) return stopped(run, ctl, started);
  // rejected credentials, a plan-wide blocker (missing rights) and (2b) a shortfall are refused
  // here, before anything about the node has changed
  if (planned.authFailed) return fail(run, nm, started, planned.error ?? 'rejected', 'CloudAuthFailed');
  const blocked = blockerGate(run, planned, fresh);
  if (blocked) return fail(run, nm, started, blocked, 'EvacuationBlocked');
  const refused = await capacityGate(run, planned, fresh);
  if (refused) return fail(run, nm, started, refused, 'InsufficientCapacity');
  await run.event(
    'Normal',
    'EvacuationStarted',
    `evacuating node ${run.nodeName} (trigger: ${desired.trigger})`,
  );
  const moving = toMove(planned.plans ?? []);
  if (moving.length) await explainHeld(run, stillOnHost(moving));

  // 3. cordon (for a NodeMaintenance) and our taint: the first change to the node
  await isolate(run, nm, desired.trigger);

  const events = new ProgressEvents((type, reason, message) => void run.event(type, reason, message));
  const progress = new ProgressRecord(run.store, run.log);
  const outcomes = await unlessStopped(ctl, () =>
    host.evacuate(nodeRef(run.nodeName, run.node), {
      signal: ctl.signal,
      // from the first change, not from the trigger: hours waiting for a window, a blocker or
      // a slot must not use up the time the migrations have
      deadline: new Date(run.now().getTime() + config.evacuation.timeout * 1000),
      trigger: desired.trigger,
      dryRun: config.dryRun,
      abortOnCancel: config.evacuation.abortOnCancel,
      records: run.store,
      onProgress: (plugin, items) => {
        events.report(plugin, items);
        progress.report(plugin, items);
      },
    }),
  );
  if (!outcomes || ctl.signal.aborted) return stopped(run, ctl, started);
  await run.store.update({ outcomes: outcomes.map(summarize) });

  if (outcomes.some((o) => !o.succeeded) && config.drain.requirePluginsSucceeded) {
    const auth = outcomes.some((o) => isAuthError(o.error));
    return fail(run, nm, started, failureText(outcomes), auth ? 'CloudAuthFailed' : 'EvacuationFailed');
  }

  // 4. pods, only after the VMs moved; pods a plugin takes care of are left to it
  // mode observe: a NodeMaintenance operator drains the pods of its CRs itself
  const operatorDrains =
    config.nodeMaintenance.mode === 'observe' && desired.trigger.startsWith('NodeMaintenance/');
  if (config.drain.enabled && !config.dryRun && !operatorDrains) {
    const result = await unlessStopped(ctl, () => drainPods(run, nm, outcomes, ctl));
    if (result === undefined || ctl.signal.aborted) return stopped(run, ctl, started);
    if (result.failure) return fail(run, nm, started, result.failure);
  }

  // 5. done, unless a cancel raced the end: then it ends as a cancel (the next pass restores)
  if (ctl.signal.aborted) return stopped(run, ctl, started);
  await run.store.update({
    phase: 'Evacuated',
    attemptedAt: run.now().toISOString(),
    failures: undefined,
  });
  metrics?.phase('Evacuated');
  metrics?.evacuationFinished('succeeded', seconds(run, started));
  // the gate opened when the outcomes said every VM had left; one left behind keeps it, and says so
  await explainEvacuated(run);
  await run.event(
    'Normal',
    'EvacuationSucceeded',
    `node ${run.nodeName} evacuated (trigger: ${desired.trigger})`,
    nmRef(nm),
  );
  await writeMaintenanceStatus(
    run,
    nm,
    evacuatedMaintenance('virtual machines moved and pods drained', run.now(), podCounts(run.store.current)),
  );
  return { requeueAfterMs: config.resyncInterval * 1000 };
}

/** 1. intent first: a crash from here on leaves a record to resume from. Then take the CR (changes nothing on the node). */
async function recordIntent(
  run: NodeRun,
  desired: EvacuatedDesire,
  started: Date,
  queue: boolean,
): Promise<void> {
  const nm = desired.maintenance;
  const record = attemptRecord(run.store.current, desired.trigger, started, queue, serverNow(run));
  // this run has moved nothing yet: an older attempt's outcomes, or a resumed one's from before a
  // restart (servers may have landed on the host since), would open the drain gate
  delete record.outcomes;
  await run.store.set(record);
  run.deps.metrics?.phase(record.phase);
  if (nm) await takeMaintenance(run, nm);
  await running(run, nm, 'evacuating virtual machines');
}
