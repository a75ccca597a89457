// Per-plugin progress in the Node record (moved / total / failed), for `drainer status`. Written
// from the plugins' progress reports, only when a count changes: a report that repeats the same
// counts (every poll of a migration) costs no API call.
import type { Logger } from '../../observability/logger.ts';
import { memoryLeft } from '../backends/memory-left.ts';
import { countItems } from '../backends/vm-count.ts';
import type { WorkloadProgress } from '../backends/plugin.ts';
import type { NodeRecordStore, PluginProgress } from './record.ts';

export function countProgress(items: readonly WorkloadProgress[]): PluginProgress {
  let moved = 0;
  let failed = 0;
  let total = 0;
  const copies: NonNullable<PluginProgress['copies']> = [];
  for (const w of items) {
    if (w.copy && w.state === 'migrating') {
      const { totalBytes, remainingBytes, converging, stallAction } = w.copy;
      copies.push({
        name: w.name,
        totalBytes,
        remainingBytes,
        converging,
        ...(stallAction ? { stallAction } : {}),
      });
    }
    if (w.state === 'skipped') continue;
    total++;
    if (w.state === 'succeeded') moved++;
    else if (w.state === 'failed' || w.state === 'blocked') failed++;
  }
  const memory = memoryLeft(items);
  const here = countItems(items);
  return {
    moved,
    total,
    failed,
    onHost: here.onHost,
    stopped: here.stopped,
    ...(copies.length ? { copies } : {}),
    ...(memory ? { memoryLeftBytes: memory.leftBytes } : {}),
    ...(memory?.bytesPerSecond ? { bytesPerSecond: memory.bytesPerSecond } : {}),
  };
}

const same = (a: PluginProgress | undefined, b: PluginProgress): boolean =>
  a !== undefined &&
  a.moved === b.moved &&
  a.total === b.total &&
  a.failed === b.failed &&
  a.onHost === b.onHost &&
  a.stopped === b.stopped &&
  a.memoryLeftBytes === b.memoryLeftBytes &&
  JSON.stringify(a.copies) === JSON.stringify(b.copies);

export class ProgressRecord {
  readonly #store: NodeRecordStore;
  readonly #log: Logger;

  constructor(store: NodeRecordStore, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /** Takes one plugin report; writes the record when that plugin's counts changed. Never throws. */
  report(plugin: string, items: readonly WorkloadProgress[]): void {
    const record = this.#store.current;
    if (!record) return;
    const counts = countProgress(items);
    if (same(record.progress?.[plugin], counts)) return;
    this.#store
      .update({ progress: { ...record.progress, [plugin]: counts } })
      .catch((err: unknown) => this.#log.debug({ err, plugin }, 'progress not written to the record'));
  }
}
