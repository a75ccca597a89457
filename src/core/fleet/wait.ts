// Before the slot: may this node start now (windows, freezes, blockers)? While it may not, it
// waits Queued with nothing changed, its queuedAt (its place in the fair queue) kept, and its
// record, an Event and the NodeMaintenance say why and until when. An evacuation that began
// already (resumed) is never held: a running one finishes when the window closes.
import { maintenanceStatus } from '../maintenance/maintenance-status.ts';
import { writeMaintenanceStatus } from '../maintenance/maintenance-sync.ts';
import { maintenanceRef, type MaintenanceObject } from '../cluster/objects.ts';
import { resumes } from '../record/record.ts';
import type { NodeRun } from '../agent/run-context.ts';
import { START_NOW_ANNOTATION, startNowAsked } from './start-now.ts';
import type { StartVerdict } from './types.ts';

/**
 * 'open' when it may go on ('now': asked to, past everything); false when stopped (cancel or
 * shutdown) while waiting. `onHeld`: called when the gate holds it (it goes on in an old place).
 */
export async function waitToStart(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  ctl: { signal: AbortSignal },
  onHeld?: () => void,
): Promise<'open' | 'now' | false> {
  const gate = run.deps.startGate;
  const rec = run.store.current;
  if (!rec || resumes(rec)) return 'open';
  // nothing to wait for: a start-now asked anyway is still recorded, and taken off (honoured once)
  if (!gate) return (await startedNow(run, nm)) ? 'now' : 'open';
  const queuedAt = rec.queuedAt ? new Date(rec.queuedAt) : run.now();
  let told = '';
  while (!ctl.signal.aborted) {
    if (await startedNow(run, nm)) {
      run.deps.metrics?.gate?.(gate.state(), undefined);
      return 'now';
    }
    const v = await gate.check({ node: run.nodeName, queuedAt, signal: ctl.signal });
    run.deps.metrics?.gate?.(gate.state(), v.open ? undefined : v.kind);
    if (v.open) {
      if (run.store.current?.waiting) await run.store.update({ waiting: undefined });
      return 'open';
    }
    onHeld?.();
    // one record write, Event and status per change of reason (not per check)
    const key = `${v.kind} ${v.until ?? ''} ${v.kind === 'window' || v.kind === 'freeze' ? '' : v.reason}`;
    if (key !== told) {
      told = key;
      await tell(run, nm, v);
    }
    const ms = gate.recheckMs(v);
    if (run.live) await run.live.sleep(ms, ctl.signal);
    else await sleep(ms, ctl.signal);
  }
  // cancelled (uncordon) or shut down: it no longer waits here
  run.deps.metrics?.gate?.(gate.state(), undefined);
  return false;
}

/** Still clear to start (after the wait for a slot)? No gate, or a resumed evacuation: yes. */
export async function clearToStart(
  run: NodeRun,
  queuedAt: Date,
  ctl: { signal: AbortSignal },
): Promise<boolean> {
  const gate = run.deps.startGate;
  if (!gate || resumes(run.store.current)) return true;
  return (await gate.check({ node: run.nodeName, queuedAt, signal: ctl.signal })).open;
}

async function tell(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  v: Extract<StartVerdict, { open: false }>,
): Promise<void> {
  const prev = run.store.current?.waiting;
  await run.store.update({
    waiting: {
      kind: v.kind,
      reason: v.reason,
      since: prev?.since ?? run.now().toISOString(),
      ...(v.until !== undefined ? { until: new Date(v.until).toISOString() } : {}),
    },
  });
  run.log.info({ kind: v.kind }, `waiting to start: ${v.reason}`);
  void run.event('Normal', 'EvacuationWaiting', v.reason, nm ? maintenanceRef(nm) : undefined);
  await writeMaintenanceStatus(
    run,
    nm,
    maintenanceStatus({
      phase: 'Running',
      reason: 'Queued',
      message: v.reason,
      now: run.now(),
      lastError: v.reason,
    }),
  ).catch((err: unknown) => run.log.debug({ err }, 'NodeMaintenance wait status not written'));
}

/** Honours drainer.dev/start-now once: records who and when, and takes the Node's annotation off. */
async function startedNow(run: NodeRun, nm: MaintenanceObject | undefined): Promise<boolean> {
  const node = run.live?.node() ?? run.node;
  const maintenance = nm
    ? (run.live?.maintenances().find((m) => m.metadata?.uid === nm.metadata?.uid) ?? nm)
    : undefined;
  const asked = startNowAsked(node, maintenance, run.now(), run.store.current);
  if (!asked) return false;
  await run.store.update({ waiting: undefined, startedNow: { by: asked.by, at: asked.at } });
  const text = `starting now, past windows, freezes and blockers, as ${asked.by} asked at ${asked.at}`;
  run.log.info({ by: asked.by }, text);
  void run.event('Normal', 'EvacuationStartedNow', text, nm ? maintenanceRef(nm) : undefined);
  if (asked.from === 'node')
    await run.deps.cluster
      .setNodeAnnotation(run.nodeName, START_NOW_ANNOTATION, null)
      .catch((err: unknown) => run.log.warn({ err }, `could not remove ${START_NOW_ANNOTATION}`));
  return true;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
