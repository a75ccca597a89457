// What the demo's acts report (from the Node records' timeline), read by the summaries.
import type { FleetTurn, PhaseChange } from './timeline.ts';
import type { TrackedItem } from './tracker.ts';

export interface PhaseResult {
  /** The node's phase when the wait ended ("timeout" when it never got there). */
  readonly reached: string;
  /** Simulated and real milliseconds from the request (cordon/uncordon) to the phase. */
  readonly simMs: number;
  readonly realMs: number;
}

export interface FleetReport {
  /** fleet.maxConcurrentEvacuations as the agents ran with it. */
  readonly budget: number | string;
  /** The nodes cordoned at once. */
  readonly nodes: readonly string[];
  /** Each node's wait and evacuation, in the order they took a slot. */
  readonly turns: readonly FleetTurn[];
  /** Every phase change of every Node record, in the API server's order. */
  readonly changes: readonly PhaseChange[];
  readonly maxEvacuating: number;
  /** Nodes seen waiting for a blocker (the backup pod) to clear. */
  readonly held: readonly string[];
  /** The servers that were on each node, as they ended. */
  readonly items: Readonly<Record<string, readonly TrackedItem[]>>;
  /** From the cordon until every node was Evacuated (or Failed, or the time was up). */
  readonly evacuation: PhaseResult;
  readonly restore: PhaseResult;
  /** Every node Evacuated within the budget, then back in service. */
  readonly ok: boolean;
}
