// What the migration and evacuation controllers are given, and the migration history tests read.
import type { Clock } from '../../clock.ts';
import type { StoreLike } from '../store.ts';
import type { ControllerTimings } from '../types.ts';

/** Failures per VMI uid (for KubeVirt's backoff), attempts, and the concurrency reached. */
export class MigrationHistory {
  readonly failures = new Map<string, { count: number; lastAt: number }>();
  readonly attempts = new Map<string, number>();
  /** Highest number of migrations seen in flight at once, cluster-wide and per source node. */
  maxInFlight = 0;
  readonly maxInFlightPerNode = new Map<string, number>();
}

/** What the migration and the evacuation controller share (one object serves both). */
export interface VirtControllerDeps {
  store: StoreLike;
  clock: Clock;
  timings: ControllerTimings;
  history: MigrationHistory;
  wake: () => void;
  onError: (e: unknown) => void;
}
