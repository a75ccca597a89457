// The record an evacuation attempt starts from: fresh, resumed, or still queued for the fleet.
import { randomUUID } from 'node:crypto';
import { newRecord, type NodeRecord } from '../record/record.ts';

/**
 * The record for a new attempt: a resumed one keeps its start and everything it knows (and its
 * place in the fleet queue; without a budget it goes on Evacuating). So does a retry of the same
 * trigger after Failed (its since and queuedAt). A fresh one with a budget starts Queued.
 */
export function attemptRecord(
  current: NodeRecord | undefined,
  trigger: string,
  now: Date,
  queue: boolean,
  /** The API server's time now: the place in the fleet queue (default `now`). */
  serverNow: Date = now,
): NodeRecord {
  const phase = queue ? 'Queued' : 'Evacuating';
  const queuedAt = queue ? { queuedAt: now.toISOString(), queueStamp: serverNow.getTime() } : {};
  if (!current) return { ...newRecord(trigger, now), phase, ...queuedAt };
  if (current.phase === 'Evacuating') return { ...withoutError(current), trigger };
  if (current.resumes) {
    const { resumes: _r, ...rest } = withoutError(current);
    return queue ? { ...withoutError(current), trigger } : { ...rest, phase: 'Evacuating', trigger };
  }
  const { queuedAt: was, queueStamp: place, ...rest } = withoutError(current);
  // drained again while its restore runs: the maintenance the restore ended is over, and with it an
  // operator's release bound to its id (still on the Node until the restore ends): this is another
  // one. What the restore has not yet undone stays in the record, for the next restore
  if (current.phase === 'Restoring')
    return { ...rest, ...queuedAt, phase, trigger, id: randomUUID(), since: now.toISOString() };
  // the same evacuation tried again (a node refused for a blocker or capacity, re-checked at each
  // resync): it keeps when its wait began and its place in the fleet queue
  const again = current.trigger === trigger;
  const kept = { queuedAt: was, ...(place !== undefined ? { queueStamp: place } : {}) };
  const keep = (current.phase === 'Queued' || again) && was ? kept : queuedAt;
  return { ...rest, ...keep, phase, trigger, since: again ? current.since : now.toISOString() };
}

function withoutError(r: NodeRecord): NodeRecord {
  const { lastError: _dropped, failureReason: _reason, ...rest } = r;
  return rest;
}
