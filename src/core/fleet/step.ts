// The fleet slot as a step of the evacuation: queue (record phase Queued, label, Event, status),
// take a slot before the first change, and give it back on every way out.
import { maintenanceStatus } from '../maintenance/maintenance-status.ts';
import { writeMaintenanceStatus } from '../maintenance/maintenance-sync.ts';
import { maintenanceRef, type MaintenanceObject } from '../cluster/objects.ts';
import { queuePlace, resumes, type NodeRecord } from '../record/record.ts';
import type { NodeRun } from '../agent/run-context.ts';
import type { Slot, SlotWait } from './types.ts';
import { clearToStart, waitToStart } from './wait.ts';
import { isShutdownTrigger } from '../shutdown/mark.ts';

const clock = (iso: string | undefined): string => (iso ? iso.slice(11, 16) : '?');

/** "waiting for a slot: 1 of 1 taken by node-3 since 12:04" */
export function waitText(w: SlotWait): string {
  const by = w.holders.map((h) => `${h.node} since ${clock(h.since)}`).join(', ');
  const place = w.position ? `; number ${w.position}${w.orLater ? ' or later' : ''} in the queue` : '';
  return `waiting for a slot: ${w.holders.length} of ${w.total} taken${by ? ` by ${by}` : ''}${place}`;
}

/**
 * Waits for a slot. Undefined without a budget; null when stopped while waiting (a cancel leaves
 * the queue with the restore's first record write; a shutdown keeps the place).
 */
export async function takeSlot(
  run: NodeRun,
  nm: MaintenanceObject | undefined,
  ctl: { signal: AbortSignal; cancelled(): boolean },
): Promise<Slot | undefined | null> {
  const { budget, metrics } = run.deps;
  if (!run.store.current) return undefined;
  // a host going down waits for nothing, no slot beyond the budget either (core/shutdown/mark.ts)
  const urgent = isShutdownTrigger(run.store.current.trigger);
  // windows, freezes and blockers first: it keeps its place in the queue meanwhile
  // held at the gate (in an earlier pass too): its label was there, but no waiter counted it
  let held = run.store.current.waiting !== undefined;
  const onHeld = () => (held = true);
  let passed = urgent || (await waitToStart(run, nm, ctl, onHeld));
  if (!passed) return null;
  const rec = run.store.current;
  if (!rec) return undefined;
  if (!budget || urgent) {
    // a gate without a budget: out of the queue (the label goes in this write)
    if (rec.phase === 'Queued') {
      await run.store.update({
        phase: 'Evacuating',
        resumes: undefined,
        ...(resumes(rec) ? {} : { since: run.now().toISOString() }),
      });
      run.deps.metrics?.phase('Evacuating');
    }
    return undefined;
  }
  const queuedAt = rec.queuedAt ? new Date(rec.queuedAt) : run.now();
  // its place in the queue is on the API server's clock, which every agent shares
  const place = queuePlace(rec) ?? serverNow(run).getTime();
  // resumed (restart, lost slot): it began before, and keeps its start when it goes on
  const resumed = resumes(rec);
  const resume = resumeSlot(rec);
  let told = false;
  let slot: Slot | undefined;
  for (;;) {
    slot = await budget.acquire({
      node: run.nodeName,
      queuedSince: new Date(place),
      signal: ctl.signal,
      enqueue: () => enqueue(run, queuedAt, place),
      // in an old place (resumed, retried, held at the gate, or back after a blocker): waiters
      // that read the queue meanwhile must hear of it (queue-return.ts). Not by the clock: under
      // load a fresh node's record write alone can take seconds, and it is at the tail
      returning: resumed || !!rec.attemptedAt || held || slot !== undefined,
      // a restart in the middle of it takes its own slot back; no other slot naming this node (a slot
      // given back for a blocker names it no more, so asking again is harmless)
      ...resume,
      onWait: (w) => {
        metrics?.fleetSlots?.(w.holders.length, w.total);
        const text = waitText(w);
        run.log.info({ position: w.position }, text);
        // one Event and status write per wait: each hand-off changes the picture for every waiter,
        // and thousands of waiters must not write on every one (the log and metrics follow it)
        if (told) return;
        told = true;
        void run.event('Normal', 'EvacuationQueued', text, nm ? maintenanceRef(nm) : undefined);
        void writeMaintenanceStatus(
          run,
          nm,
          // the medik8s schema has no conditions (a real API server prunes them): lastError names the wait
          maintenanceStatus({
            phase: 'Running',
            reason: 'Queued',
            message: text,
            now: run.now(),
            lastError: text,
          }),
        ).catch((err: unknown) => run.log.debug({ err }, 'NodeMaintenance queue status not written'));
      },
    });
    if (!slot) return null;
    // a blocker may have begun to fire while it waited for the slot: looked at again before the
    // first change (the verdict is the shared one; a pod selector costs one list)
    if (passed === 'now' || (await clearToStart(run, queuedAt, ctl))) break;
    await slot.release();
    passed = await waitToStart(run, nm, ctl, onHeld);
    if (!passed) return null;
  }
  metrics?.queueFinished?.((run.now().getTime() - queuedAt.getTime()) / 1000);
  // the queue label comes off in this same write; a retry (an attempt ended before: a node refused
  // for a blocker or capacity) keeps when its wait began
  await run.store.update({
    phase: 'Evacuating',
    slot: slot.name,
    resumes: undefined,
    ...(resumed || rec.attemptedAt ? {} : { since: run.now().toISOString() }),
  });
  run.deps.metrics?.phase('Evacuating');
  return slot;
}

/** The slot a resumed evacuation holds, as its record says: the only one it takes back without queueing. */
const resumeSlot = (rec: NodeRecord): { resume?: string } =>
  resumes(rec) && rec.slot ? { resume: rec.slot } : {};

/**
 * Into the queue: the record's phase Queued carries the queue label in the same Node write. A
 * fresh evacuation was recorded Queued already; a resumed one that must wait for a slot again
 * (restart, lost slot) goes back to Queued, in its old place, so status and operators see the wait.
 */
async function enqueue(run: NodeRun, queuedAt: Date, place: number): Promise<void> {
  const rec = run.store.current;
  if (!rec || (rec.phase === 'Queued' && rec.queuedAt)) return;
  const { slot: _lost, ...rest } = rec;
  // a restart while it waits must not take it for a fresh attempt: it resumes
  await run.store.set({
    ...rest,
    phase: 'Queued',
    queuedAt: queuedAt.toISOString(),
    queueStamp: place,
    resumes: true,
  });
  run.deps.metrics?.phase('Queued');
}

/** The API server's time now (the fleet queue's clock); before any answer, ours. */
export const serverNow = (run: NodeRun): Date => run.deps.cluster.serverNow?.() ?? run.now();

/** Gives the slot back (kept on shutdown: it expires, or the restarted agent re-takes it). */
export async function giveBack(run: NodeRun, slot: Slot | undefined): Promise<void> {
  if (!slot) return;
  if (run.signal.aborted) return slot.abandon();
  await slot.release();
  if (run.store.current?.slot)
    await run.store
      .update({ slot: undefined })
      .catch((err: unknown) => run.log.warn({ err }, 'slot not removed from the record'));
}

/** The evacuation's control while it holds a slot: losing the slot stops it like a shutdown. */
export function withSlot<C extends { signal: AbortSignal; cancelled(): boolean; lostSlot?(): boolean }>(
  ctl: C,
  slot: Slot | undefined,
): C {
  if (!slot) return ctl;
  return { ...ctl, signal: AbortSignal.any([ctl.signal, slot.lost]), lostSlot: () => slot.lost.aborted };
}
