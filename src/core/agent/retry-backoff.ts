// How long a Failed evacuation waits before its next try: one resync interval after the first
// failure, doubling with each failure in a row, never more than an hour (issue 23 item 8). A named
// refusal (InsufficientCapacity, EvacuationBlocked) is re-checked every resync: nothing was changed.
import type { NodeRecord } from '../record/record.ts';

export const MAX_RETRY_WAIT_MS = 3600_000;

/** The wait after the record's last attempt, in ms. */
export function retryDelayMs(
  rec: Pick<NodeRecord, 'failures' | 'failureReason'>,
  resyncSeconds: number,
): number {
  const base = resyncSeconds * 1000;
  if (rec.failureReason) return base;
  const doublings = Math.max(0, (rec.failures ?? 1) - 1);
  return Math.max(base, Math.min(MAX_RETRY_WAIT_MS, base * 2 ** Math.min(doublings, 30)));
}
