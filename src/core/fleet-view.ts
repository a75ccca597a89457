// The fleet as `drainer status` shows it: one row per Node that carries a record, with its slot
// (while Evacuating) or its place in the queue (while Queued). The queue order is the fleet
// budget's: ascending drainer.dev/queued label (epoch ms), then node name.
import { IGNORE_LABEL } from '../names.ts';
import type { NodeObject } from './objects.ts';
import {
  parseRecord,
  QUEUED_LABEL,
  type NodeRecord,
  type Phase,
  type PluginProgress,
  STATE_ANNOTATION,
} from './record.ts';

export interface FleetRow {
  readonly node: string;
  /** `Ignored`: the node opts out (drainer.dev/ignore=true) and carries no record. */
  readonly phase: Phase | 'Ignored';
  /** The node carries drainer.dev/ignore=true: reported, never evacuated. */
  readonly ignored?: true;
  readonly trigger: string;
  readonly since: string;
  readonly queuedAt?: string;
  /** The Lease held while Evacuating. */
  readonly slot?: string;
  /** 1 = next to get a slot; only for nodes carrying the queue label. */
  readonly queuePosition?: number;
  readonly progress: Readonly<Record<string, PluginProgress>>;
  readonly lastError?: string;
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

const ignoredNode = (n: NodeObject): boolean => n.metadata?.labels?.[IGNORE_LABEL] === 'true';

function row(name: string, rec: NodeRecord, position: number | undefined, ignored: boolean): FleetRow {
  return {
    node: name,
    ...(ignored ? { ignored: true as const } : {}),
    phase: rec.phase,
    trigger: rec.trigger,
    since: rec.since,
    ...(rec.queuedAt ? { queuedAt: rec.queuedAt } : {}),
    ...(rec.slot ? { slot: rec.slot } : {}),
    ...(position !== undefined ? { queuePosition: position } : {}),
    progress: rec.progress ?? {},
    ...(rec.lastError ? { lastError: rec.lastError } : {}),
  };
}

/** One row per node with a record or the opt-out label, sorted by node name. */
export function fleetRows(nodes: readonly NodeObject[], now: Date = new Date()): FleetRow[] {
  const queue = queueOrder(nodes);
  const rows: FleetRow[] = [];
  for (const n of nodes) {
    const rec = parseRecord(n.metadata?.annotations?.[STATE_ANNOTATION], now);
    const ignored = ignoredNode(n);
    if (!rec) {
      if (ignored)
        rows.push({ node: nameOf(n), phase: 'Ignored', ignored: true, trigger: '', since: '', progress: {} });
      continue;
    }
    const at = queue.indexOf(nameOf(n));
    rows.push(row(nameOf(n), rec, at >= 0 ? at + 1 : undefined, ignored));
  }
  return rows.sort((a, b) => a.node.localeCompare(b.node));
}
