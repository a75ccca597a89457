// The evacuation steps of design.md §1: record intent and take the NodeMaintenance, wait for a
// fleet slot, plan, check capacity, then cordon (for a NodeMaintenance) and taint, run the plugins
// under the deadline, drain, record done.
import { isAuthError } from '../errors.ts';
import { blockerGate } from './blockers.ts';
import { capacityGate } from './capacity.ts';
import type { Desired } from './desired.ts';
import { evacuatedMaintenance, maintenanceStatus } from './maintenance-status.ts';
import { takeMaintenance, writeMaintenanceStatus } from './maintenance-sync.ts';
import { nodeRef } from './node-policy.ts';
import { maintenanceRef, type MaintenanceObject } from './objects.ts';
import type { Outcome, Plan } from './plugin.ts';
import { giveBack, takeSlot, withSlot } from './fleet/step.ts';
import { ProgressEvents, summarizePlans } from './progress-events.ts';
import { ProgressRecord } from './progress-record.ts';
import {
  EVACUATING_TAINT,
  errorText,
  firstAttempt,
  newRecord,
  type NodeRecord,
  type OutcomeSummary,
} from './record.ts';
import type { NodeRun } from './run-context.ts';
import type { RunResult } from './queue.ts';
import { retryDelayMs } from './retry-backoff.ts';
import { explainEvacuated, explainHeld, gateSkip, stillOnHost, toMove } from './gate/step.ts';

export type EvacuatedDesire = Extract<Desired, { state: 'Evacuated' }>;

const hasOurTaint = (run: NodeRun): boolean =>
  (run.node.spec?.taints ?? []).some(
    (t) => t.key === EVACUATING_TAINT.key && t.effect === EVACUATING_TAINT.effect,
  );

/**
 * The record for a new attempt: a resumed one keeps its start and everything it knows (and its
 * place in the fleet queue; without a budget it goes on Evacuating). A fresh one with a budget
 * starts Queued.
 */
function attemptRecord(
  current: NodeRecord | undefined,
  trigger: string,
  now: Date,
  queue: boolean,
): NodeRecord {
  const phase = queue ? 'Queued' : 'Evacuating';
  const queuedAt = queue ? { queuedAt: now.toISOString() } : {};
  if (!current) return { ...newRecord(trigger, now), phase, ...queuedAt };
  if (current.phase === 'Evacuating') return { ...withoutError(current), trigger };
  if (current.resumes) {
    const { resumes: _r, ...rest } = withoutError(current);
    return queue ? { ...withoutError(current), trigger } : { ...rest, phase: 'Evacuating', trigger };
  }
  const { queuedAt: was, ...rest } = withoutError(current);
  const keep = current.phase === 'Queued' && was ? { queuedAt: was } : queuedAt;
  return { ...rest, ...keep, phase, trigger, since: now.toISOString() };
}

function withoutError(r: NodeRecord): NodeRecord {
  const { lastError: _dropped, failureReason: _reason, ...rest } = r;
  return rest;
}

const summarize = (o: Outcome): OutcomeSummary => ({
  plugin: o.plugin,
  succeeded: o.succeeded,
  moved: o.workloads.filter((w) => w.state === 'succeeded').length,
  failed: o.workloads.filter((w) => w.state === 'failed' || w.state === 'blocked').length,
  ...(o.message ? { message: errorText(o.message) } : {}),
});

function failureText(outcomes: readonly Outcome[]): string {
  return outcomes
    .filter((o) => !o.succeeded)
    .map((o) => {
      // a plugin's message may name its workloads already ("vms/x cannot migrate (…)"): not twice
      const bad = o.workloads.filter(
        (w) => (w.state === 'failed' || w.state === 'blocked') && !o.message?.includes(w.name),
      );
      const names = bad.map((w) => `${w.name}: ${w.message ?? w.state}`).join('; ');
      return `${o.plugin}: ${o.message ?? 'not every workload moved'}${names ? ` (${names})` : ''}`;
    })
    .join('; ');
}

export interface EvacuationControl {
  /** Aborted on cancel (desired changed) or with the agent's shutdown. */
  readonly signal: AbortSignal;
  cancelled(): boolean;
  /** True once the fleet slot this evacuation held was lost (set by withSlot). */
  lostSlot?(): boolean;
}

export async function evacuate(
  run: NodeRun,
  desired: EvacuatedDesire,
  ctl: EvacuationControl,
): Promise<RunResult> {
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
    await giveBack(run, slot ?? undefined);
  }
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
  await isolate(run, nm);

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
  const record = attemptRecord(run.store.current, desired.trigger, started, queue);
  // a new attempt has not moved anything yet: an older attempt's outcomes would open the drain gate
  if (run.store.current?.phase !== 'Evacuating') delete record.outcomes;
  await run.store.set(record);
  run.deps.metrics?.phase(record.phase);
  if (nm) await takeMaintenance(run, nm);
  await running(run, nm, 'evacuating virtual machines');
}

/**
 * The first change to the node itself. Everything before (record, NodeMaintenance finalizer,
 * fleet slot, plan, capacity check) leaves the node as the operator left it, so a queued or
 * refused evacuation has nothing to undo. A NodeMaintenance on a schedulable node: we cordon
 * (and say so before doing it); then our taint keeps new pods away while the VMs move.
 */
async function isolate(run: NodeRun, nm: MaintenanceObject | undefined): Promise<void> {
  const cordon =
    nm !== undefined &&
    run.deps.config.nodeMaintenance.mode === 'own' &&
    run.node.spec?.unschedulable !== true;
  const taint = !hasOurTaint(run);
  if (!cordon && !taint) return;
  // one write: the record of the change and the change land together (or neither does)
  await run.store.update(
    { ...(cordon ? { cordonedByUs: true } : {}), ...(taint ? { taintedByUs: true } : {}) },
    { ...(cordon ? { cordon: true as const } : {}), ...(taint ? { taint: { ...EVACUATING_TAINT } } : {}) },
  );
}

/**
 * 2. plan (a plugin that cannot plan still gets to try, and fails in its Outcome, unless the
 * capacity check refuses an unknown capacity). Undefined when stopped.
 */
interface Planned {
  readonly plans?: Plan[];
  readonly error?: string;
  /** The cloud rejected the credentials: reported as CloudAuthFailed, not as a capacity problem. */
  readonly authFailed?: boolean;
}

async function plan(run: NodeRun, ctl: EvacuationControl, fresh: boolean): Promise<Planned | undefined> {
  try {
    const capacity = run.deps.config.evacuation.capacityCheck !== 'off';
    const plans = await run.deps.host.plan(nodeRef(run.nodeName, run.node), ctl.signal, { capacity });
    const { message, blockers } = summarizePlans(plans);
    if (fresh) await run.event('Normal', 'EvacuationPlanned', message);
    if (blockers.length)
      await run.event('Warning', 'EvacuationBlocked', `cannot move: ${blockers.join('; ')}`);
    return { plans };
  } catch (err) {
    if (ctl.signal.aborted) return undefined;
    run.log.warn({ err }, 'planning failed');
    return {
      error: err instanceof Error ? err.message : String(err),
      ...(isAuthError(err) ? { authFailed: true } : {}),
    };
  }
}

/** Runs a step; when the step throws because we were cancelled or shut down, answers undefined. */
async function unlessStopped<T>(ctl: EvacuationControl, step: () => Promise<T>): Promise<T | undefined> {
  try {
    return await step();
  } catch (err) {
    if (ctl.signal.aborted) return undefined;
    throw err;
  }
}

/** Drains the pods; answers the failure text when the drain failed. */
async function drainPods(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  outcomes: readonly Outcome[],
  ctl: EvacuationControl,
): Promise<{ failure?: string }> {
  const handled = new Map<string, string>();
  for (const o of outcomes)
    for (const p of o.handledPods ?? []) handled.set(`${p.namespace}/${p.name}`, o.plugin);
  await run.event('Normal', 'DrainStarted', `evicting pods from node ${run.nodeName}`);
  let lastPercent = -1;
  const result = await run.deps.cluster.drain({
    node: run.nodeName,
    signal: ctl.signal,
    log: run.log,
    involved: [run.ref, ...(nm ? [maintenanceRef(nm)] : [])],
    skipPod: (pod) => {
      const gate = gateSkip(run, pod);
      if (gate) return gate;
      const plugin = handled.get(`${pod.namespace}/${pod.name}`);
      return plugin ? `handled by the ${plugin} plugin` : undefined;
    },
    onProgress: (p) => {
      const percent = p.total ? Math.floor((p.evicted * 100) / p.total) : 100;
      if (percent === lastPercent) return;
      lastPercent = percent;
      const pods = {
        total: p.total,
        evicted: p.evicted,
        pending: p.pending.map((x) => `${x.namespace}/${x.name}`),
      };
      void running(run, nm, 'draining pods', pods).catch((err: unknown) =>
        run.log.debug({ err }, 'NodeMaintenance progress not written'),
      );
    },
  });
  await run.store.update({
    drain: {
      succeeded: result.succeeded,
      total: result.total,
      evicted: result.evicted.length,
      ignored: result.ignored.length,
      failed: result.failed.map((f) => ({
        pod: `${f.pod.namespace}/${f.pod.name}`,
        reason: errorText(f.reason),
      })),
    },
  });
  if (result.succeeded) {
    await run.event('Normal', 'DrainSucceeded', `evicted ${result.evicted.length} of ${result.total} pods`);
    return {};
  }
  const failed = result.failed.map((f) => `${f.pod.namespace}/${f.pod.name}: ${f.reason}`).join('; ');
  return { failure: `drain failed: ${failed || 'pods remain on the node'}` };
}

const nmRef = (nm: MaintenanceObject | undefined) => (nm ? maintenanceRef(nm) : undefined);

const seconds = (run: NodeRun, since: Date): number => (run.now().getTime() - since.getTime()) / 1000;

function podCounts(rec: NodeRecord | undefined) {
  const d = rec?.drain;
  return d ? { total: d.total, evicted: d.evicted, pending: d.failed.map((f) => f.pod) } : undefined;
}

function running(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  message: string,
  pods?: { total: number; evicted: number; pending: string[] },
): Promise<void> {
  return writeMaintenanceStatus(
    run,
    nm,
    maintenanceStatus({
      phase: 'Running',
      reason: 'Evacuating',
      message,
      now: run.now(),
      ...(pods ? { pods } : {}),
    }),
  );
}

const FAILURE_MESSAGE = {
  EvacuationFailed: 'evacuation failed',
  InsufficientCapacity: 'not enough capacity elsewhere',
  EvacuationBlocked: 'a workload that must move cannot; nothing was changed',
  CloudAuthFailed: "the cloud rejected drainer's credentials",
} as const;

async function fail(
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
function stopped(run: NodeRun, ctl: EvacuationControl, started: Date): RunResult {
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
