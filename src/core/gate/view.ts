// The drain gate of a node as `drainer status` says it, from the node's record alone.
import type { NodeObject } from '../objects.ts';
import type { NodeRecord } from '../record.ts';
import { allMoved, gateHeld, releasedAt } from './step.ts';

/** `held (3 of 7 servers left)`, `released`, `held: evacuation Failed: <reason>`. */
export function gateText(rec: NodeRecord, node?: NodeObject): string {
  if (releasedAt(node) !== undefined) return 'released (drainer release)';
  if (!gateHeld(rec, node)) return 'released';
  if (rec.phase === 'Evacuated' && !allMoved(rec)) return 'held: evacuated with virtual machines left';
  if (rec.phase === 'Failed') {
    // the whole reason: the table cuts its columns (not -o wide), JSON and YAML keep it
    const why = (rec.failureReason ?? rec.lastError ?? 'unknown').replace(/\s+/g, ' ');
    return `held: evacuation Failed: ${why}`;
  }
  const counts = Object.values(rec.progress ?? {});
  if (!counts.length) return 'held';
  const total = counts.reduce((n, p) => n + p.total, 0);
  const left = counts.reduce((n, p) => n + p.total - p.moved, 0);
  return `held (${left} of ${total} servers left)`;
}
