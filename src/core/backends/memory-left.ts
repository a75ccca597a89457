// The memory still to move off a node (issue 31 item 5): the memory of the VMs a plugin still has on
// the host, and an ETA from the copy rate this evacuation has measured (memory moved over the time
// from its first start to its last end). Only workloads whose memory the plugin knows count.
import type { WorkloadProgress } from './plugin.ts';

export interface MemoryLeft {
  readonly leftBytes: number;
  /** Of leftBytes, the memory of VMs whose owner is asked to move them (way out notify) and has not yet. */
  readonly awaitingOwnerBytes?: number;
  /** Memory moved per second so far in this evacuation (absent until something has moved). */
  readonly bytesPerSecond?: number;
  /** leftBytes at that rate (absent without a rate). */
  readonly etaSeconds?: number;
}

const STAYS_OUT = new Set(['succeeded', 'skipped']);

export function memoryLeft(items: readonly WorkloadProgress[]): MemoryLeft | undefined {
  const known = items.filter((w) => w.memoryBytes !== undefined);
  if (known.length === 0) return undefined;
  const leftBytes = known
    .filter((w) => !STAYS_OUT.has(w.state))
    .reduce((n, w) => n + (w.memoryBytes ?? 0), 0);
  const awaiting = known
    .filter((w) => w.state === 'pending' && w.action === 'notify')
    .reduce((n, w) => n + (w.memoryBytes ?? 0), 0);
  const waits = awaiting > 0 ? { awaitingOwnerBytes: awaiting } : {};
  const moved = known.filter((w) => w.state === 'succeeded' && w.startedAt && w.durationMs !== undefined);
  if (moved.length === 0) return { leftBytes, ...waits };
  const starts = moved.map((w) => Date.parse(w.startedAt!));
  const ends = moved.map((w, i) => starts[i]! + w.durationMs!);
  const seconds = (Math.max(...ends) - Math.min(...starts)) / 1000;
  if (!(seconds > 0)) return { leftBytes, ...waits };
  const bytesPerSecond = Math.round(moved.reduce((n, w) => n + (w.memoryBytes ?? 0), 0) / seconds);
  return { leftBytes, ...waits, bytesPerSecond, etaSeconds: Math.ceil(leftBytes / bytesPerSecond) };
}

/**
 * Per plugin evacuation: when the memory left last fell (the first report counts as a fall), so an
 * alert can tell "moving" from "stuck" with Prometheus' own clock (time() minus this). Memory whose
 * owner is asked to move it (way out notify) is a legitimate wait, not a stall: it does not count,
 * and while nothing else is left the clock stays fresh (the owner has until notifyTimeout).
 */
export class MemoryFall {
  #last: number | undefined;
  #fellAt = 0;

  /** The epoch seconds of the last fall, after taking this report's memory left. */
  seen(leftBytes: number, nowMs: number, awaitingOwnerBytes = 0): number {
    const moving = leftBytes - awaitingOwnerBytes;
    if (this.#last === undefined || moving < this.#last || (moving === 0 && awaitingOwnerBytes > 0))
      this.#fellAt = nowMs / 1000;
    this.#last = moving;
    return this.#fellAt;
  }
}
