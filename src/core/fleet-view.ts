// The fleet as `drainer status` shows it: one row per Node that carries a record, with its slot
// (while Evacuating) or its place in the queue (while Queued). The queue order is the fleet
// budget's: ascending drainer.dev/queued label (epoch ms), then node name.
import type { NodeObject } from './objects.ts';
import {
  parseRecord,
  QUEUED_LABEL,
  type NodeRecord,
  type Phase,
  type PluginProgress,
  STATE_ANNOTATION,
} from './record.ts';
import { gateText } from './gate/view.ts';

export interface FleetRow {
  readonly node: string;
  readonly phase: Phase;
  readonly trigger: string;
  readonly since: string;
  readonly queuedAt?: string;
  /** The Lease held while Evacuating. */
  readonly slot?: string;
  /** 1 = next to get a slot; only for nodes carrying the queue label. */
  readonly queuePosition?: number;
  readonly progress: Readonly<Record<string, PluginProgress>>;
  readonly lastError?: string;
  /** The drain gate: held (with what is left), released, or held by a Failed evacuation. */
  readonly gate?: string;
}

const nameOf = (n: NodeObject): string => n.metadata?.name ?? '';

/** Queue label value as a number; a label that is not a number sorts last (someone edited it by hand). */
function queuedSince(n: NodeObject): number {
  const v = Number(n.metadata?.labels?.[QUEUED_LABEL]);
  return Number.isFinite(v) ? v : Number.POSITIVE_INFINITY;
}

/** Every node carrying the queue label, first in line first. */
export function queueOrder(nodes: readonly NodeObject[]): string[] {
  return nodes
    .filter((n) => n.metadata?.labels?.[QUEUED_LABEL] !== undefined)
    .sort((a, b) => queuedSince(a) - queuedSince(b) || nameOf(a).localeCompare(nameOf(b)))
    .map(nameOf);
}

function row(n: NodeObject, rec: NodeRecord, position: number | undefined, gate: boolean): FleetRow {
  return {
    node: nameOf(n),
    phase: rec.phase,
    trigger: rec.trigger,
    since: rec.since,
    ...(rec.queuedAt ? { queuedAt: rec.queuedAt } : {}),
    ...(rec.slot ? { slot: rec.slot } : {}),
    ...(position !== undefined ? { queuePosition: position } : {}),
    progress: rec.progress ?? {},
    ...(rec.lastError ? { lastError: rec.lastError } : {}),
    ...(gate ? { gate: gateText(rec, n) } : {}),
  };
}

/** One row per node with a record, sorted by node name. */
export function fleetRows(nodes: readonly NodeObject[], now: Date = new Date(), gate = true): FleetRow[] {
  const queue = queueOrder(nodes);
  const rows: FleetRow[] = [];
  for (const n of nodes) {
    const rec = parseRecord(n.metadata?.annotations?.[STATE_ANNOTATION], now);
    if (!rec) continue;
    const at = queue.indexOf(nameOf(n));
    rows.push(row(n, rec, at >= 0 ? at + 1 : undefined, gate));
  }
  return rows.sort((a, b) => a.node.localeCompare(b.node));
}
