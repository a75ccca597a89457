// The fleet as `drainer status` shows it: one row per Node that carries a record, with its slot
// (while Evacuating) or its place in the queue (while Queued). The queue order is the fleet
// budget's: ascending drainer.dev/queued label (epoch ms), then node name.
import { leaseExpired } from './budget.ts';
import type { LeaseView } from './types.ts';
import { nodeOfLease } from '../agent/node-lease.ts';
import { IGNORE_LABEL, STRANDED_ANNOTATION } from '../../names.ts';
import { RESTORED_SHOWN_MS, strandedNotes, type StrandedNote } from '../restore/stranded-check.ts';
import type { NodeObject } from '../cluster/objects.ts';
import {
  parseRecord,
  QUEUED_LABEL,
  type NodeRecord,
  type Phase,
  type PluginProgress,
  STATE_ANNOTATION,
} from '../record/record.ts';
import type { GateObjects } from '../gate/api.ts';
import { gateText } from '../gate/view.ts';

export interface FleetRow {
  readonly node: string;
  /**
   * `Ignored`: the node opts out (drainer.dev/ignore=true) and carries no record. `InService`: no
   * record, shown because its drain gate should hold and does not, or a stranded change was undone.
   * `Stranded`: no record, and a change of drainer's was found left on the node.
   */
  readonly phase: Phase | 'Ignored' | 'Stranded' | 'InService';
  /** The node carries drainer.dev/ignore=true: reported, never evacuated. */
  readonly ignored?: true;
  readonly trigger: string;
  readonly since: string;
  readonly queuedAt?: string;
  /** When it queued by the API server's clock (epoch ms), where the record has it. */
  readonly queueStamp?: number;
  /** The Lease held while Evacuating. */
  readonly slot?: string;
  /** 1 = next to get a slot; only for nodes carrying the queue label. */
  readonly queuePosition?: number;
  readonly progress: Readonly<Record<string, PluginProgress>>;
  /** The pod drain (after the VMs moved): pods evicted of those to evict, and those that failed. */
  readonly pods?: NonNullable<NodeRecord['pods']>;
  readonly lastError?: string;
  /** While Queued behind a window, a freeze or a blocker: which, why and until when. */
  readonly waiting?: { readonly kind: string; readonly reason: string; readonly until?: string };
  /** The node's agent, from its Lease drainer-node-<node>: alive, or gone since a time (its record may be stale). */
  readonly agent?: AgentState;
  /** The drain gate: held (with what is left), released, or held by a Failed evacuation. */
  readonly gate?: string;
  /**
   * No record, but a change of drainer's was found stranded on the node (drainer.dev/stranded):
   * phase `Stranded` while it is left in place, `InService` for a day after it was restored.
   */
  readonly stranded?: readonly StrandedNote[];
}

export interface AgentState {
  readonly holder: string;
  readonly alive: boolean;
  /** When its Lease ran out (ISO), for an agent that is gone. */
  readonly goneSince?: string;
}

/** Each node's agent as its Lease says (leases of component node-agent), by node name. */
export function agentStates(
  leases: readonly LeaseView[],
  now: Date,
  defaultSeconds: number,
): Map<string, AgentState> {
  const out = new Map<string, AgentState>();
  for (const l of leases) {
    const node = nodeOfLease(l.name);
    if (!node || !l.holder) continue;
    const alive = !leaseExpired(l, now.getTime(), defaultSeconds);
    const renewed = Date.parse(l.renewTime ?? l.acquireTime ?? '');
    const until = Number.isNaN(renewed) ? undefined : renewed + (l.durationSeconds ?? defaultSeconds) * 1000;
    out.set(node, {
      holder: l.holder,
      alive,
      ...(!alive && until !== undefined ? { goneSince: new Date(until).toISOString() } : {}),
    });
  }
  return out;
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

function row(
  n: NodeObject,
  rec: NodeRecord,
  position: number | undefined,
  gate: boolean,
  objs: GateObjects | undefined,
): FleetRow {
  return {
    node: nameOf(n),
    ...(ignoredNode(n) ? { ignored: true as const } : {}),
    phase: rec.phase,
    trigger: rec.trigger,
    since: rec.since,
    ...(rec.queuedAt ? { queuedAt: rec.queuedAt } : {}),
    ...(rec.queueStamp !== undefined ? { queueStamp: rec.queueStamp } : {}),
    ...(rec.slot ? { slot: rec.slot } : {}),
    ...(position !== undefined ? { queuePosition: position } : {}),
    progress: rec.progress ?? {},
    ...(rec.pods
      ? { pods: { total: rec.pods.total, evicted: rec.pods.evicted, failed: rec.pods.failed } }
      : {}),
    ...(rec.lastError ? { lastError: rec.lastError } : {}),
    ...(rec.waiting && rec.phase === 'Queued'
      ? {
          waiting: {
            kind: rec.waiting.kind,
            reason: rec.waiting.reason,
            ...(rec.waiting.until ? { until: rec.waiting.until } : {}),
          },
        }
      : {}),
    ...(gate ? { gate: gateText(rec, n, objs) } : {}),
  };
}

/** A node without a record where a stranded change was found (left, or restored in the last day). */
function strandedRow(n: NodeObject, now: Date): FleetRow | undefined {
  const notes = strandedNotes(n.metadata?.annotations?.[STRANDED_ANNOTATION]).filter(
    (s) => !s.restored || Date.parse(s.at) + RESTORED_SHOWN_MS > now.getTime(),
  );
  const first = notes[0];
  if (!first) return undefined;
  const left = notes.some((s) => !s.restored);
  const text = notes
    .map(
      (s) =>
        `${s.what} left by drainer with no record (reason "${s.reason}"): ${s.restored ? 'restored' : 'still in place'}`,
    )
    .join('; ');
  return {
    node: nameOf(n),
    phase: left ? 'Stranded' : 'InService',
    trigger: '',
    since: first.at,
    progress: {},
    lastError: text,
    stranded: notes,
  };
}

/** A node in service whose gate pod exists and does not hold (its image cannot be pulled …). */
function inServiceRow(n: NodeObject, objs: GateObjects | undefined): FleetRow | undefined {
  if (!objs?.pod) return undefined;
  const text = gateText(undefined, n, objs);
  if (!text.startsWith('not held')) return undefined;
  return { node: nameOf(n), phase: 'InService', trigger: '', since: '', progress: {}, gate: text };
}

/**
 * One row per node with a record, a stranded change or the opt-out label, sorted by node name; with `agents`, each row
 * says whether its agent lives.
 */
export function fleetRows(
  nodes: readonly NodeObject[],
  now: Date = new Date(),
  agents?: ReadonlyMap<string, AgentState>,
  gate = true,
  /** The gate objects status read, by node: the DRAIN GATE column says what the API server shows. */
  gates?: ReadonlyMap<string, GateObjects>,
): FleetRow[] {
  const queue = queueOrder(nodes);
  const rows: FleetRow[] = [];
  for (const n of nodes) {
    const rec = parseRecord(n.metadata?.annotations?.[STATE_ANNOTATION], now);
    const ignored = ignoredNode(n);
    const objs = gates?.get(nameOf(n));
    if (!rec) {
      const stranded = strandedRow(n, now);
      const unheld = gate && !ignored ? inServiceRow(n, objs) : undefined;
      if (stranded) rows.push({ ...stranded, ...(ignored ? { ignored: true as const } : {}) });
      else if (ignored)
        rows.push({ node: nameOf(n), phase: 'Ignored', ignored: true, trigger: '', since: '', progress: {} });
      else if (unheld) rows.push(unheld);
      continue;
    }
    const at = queue.indexOf(nameOf(n));
    const agent = agents?.get(nameOf(n));
    rows.push({ ...row(n, rec, at >= 0 ? at + 1 : undefined, gate, objs), ...(agent ? { agent } : {}) });
  }
  return rows.sort((a, b) => a.node.localeCompare(b.node));
}
