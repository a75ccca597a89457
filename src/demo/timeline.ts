// The nodes' phases as the API server stored them: every change of every Node record, in the
// store's order, stamped with the simulated clock (an in-process watch, so it adds no requests).
// The fleet act reads from it who waited for whom, and how long.
import { parseRecord, STATE_ANNOTATION, type Phase } from '../core/record/record.ts';
import type { Sandbox } from '../sandbox/index.ts';

export type NodePhase = Phase | 'InService';

export interface PhaseChange {
  readonly node: string;
  readonly phase: NodePhase;
  /** Simulated epoch ms. */
  readonly at: number;
}

export interface PhaseTimeline {
  readonly changes: readonly PhaseChange[];
  stop(): void;
}

export function recordPhases(sb: Sandbox): PhaseTimeline {
  const seen = new Map<string, NodePhase>();
  const changes: PhaseChange[] = [];
  const stop = sb.kube.store.subscribe('nodes', (type, n) => {
    const node = n.metadata.name ?? '';
    if (type === 'DELETED') return;
    const phase = parseRecord(n.metadata.annotations?.[STATE_ANNOTATION])?.phase ?? 'InService';
    if ((seen.get(node) ?? 'InService') === phase) return;
    seen.set(node, phase);
    changes.push({ node, phase, at: sb.clock.now() });
  });
  return { changes, stop };
}

/** The most nodes Evacuating at the same time. */
export function maxEvacuating(changes: readonly PhaseChange[]): number {
  const now = new Set<string>();
  let max = 0;
  for (const c of changes) {
    if (c.phase === 'Evacuating') now.add(c.node);
    else now.delete(c.node);
    max = Math.max(max, now.size);
  }
  return max;
}

/** One node's turn: how long it waited Queued, behind whom, and how long it then evacuated. */
export interface FleetTurn {
  readonly node: string;
  /** Simulated ms from Queued to Evacuating (undefined: never queued, or never got a slot). */
  readonly queuedMs: number | undefined;
  /** The nodes that were Evacuating while it waited. */
  readonly behind: readonly string[];
  /** Simulated ms from Evacuating to Evacuated or Failed. */
  readonly evacuatingMs: number | undefined;
  /** The last phase of its first evacuation: Evacuated, Failed, or where it stopped. */
  readonly reached: NodePhase;
  /** Simulated epoch ms it took a slot (went Evacuating). */
  readonly startedAt: number | undefined;
}

const DONE = new Set<NodePhase>(['Evacuated', 'Failed']);

interface Wait {
  queued?: number;
  started?: number;
  ended?: number;
  last: NodePhase;
  readonly behind: Set<string>;
}

/** Each node's first evacuation in the timeline, in the order they took a slot. */
export function turns(changes: readonly PhaseChange[], nodes: readonly string[]): FleetTurn[] {
  const evacuating = new Set<string>();
  const waits = new Map<string, Wait>(nodes.map((n) => [n, { last: 'InService', behind: new Set() }]));
  for (const c of changes) {
    if (c.phase === 'Evacuating') evacuating.add(c.node);
    else evacuating.delete(c.node);
    const w = waits.get(c.node);
    if (w && w.ended === undefined) {
      if (c.phase === 'Queued') w.queued ??= c.at;
      if (c.phase === 'Evacuating') w.started ??= c.at;
      if (DONE.has(c.phase)) w.ended = c.at;
      w.last = c.phase;
    }
    // whoever is Evacuating now is ahead of every node still waiting
    for (const x of waits.values())
      if (x.queued !== undefined && x.started === undefined) for (const e of evacuating) x.behind.add(e);
  }
  return [...waits]
    .map(([node, w]) => ({
      node,
      queuedMs: w.queued !== undefined && w.started !== undefined ? w.started - w.queued : undefined,
      behind: [...w.behind].sort(),
      evacuatingMs: w.started !== undefined && w.ended !== undefined ? w.ended - w.started : undefined,
      reached: w.last,
      startedAt: w.started,
    }))
    .sort((a, b) => (a.startedAt ?? Infinity) - (b.startedAt ?? Infinity));
}
