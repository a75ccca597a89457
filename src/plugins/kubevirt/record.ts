import type { PluginRecord } from '../../core/plugin.ts';

/**
 * The KubeVirt plugin's piece of the Node record: only what restore must undo. Per-VMI progress is
 * re-read from the cluster on every run (VMIs and their migrations say where each one is), so a
 * resumed or retried evacuation never trusts stale timestamps.
 */
export interface KubevirtRecord {
  /** The drain taint we added (restore removes it only when set). */
  taint?: { key: string; effect: string };
}

export function readRecord(r: PluginRecord | undefined): KubevirtRecord {
  const taint = (r as { taint?: { key?: unknown; effect?: unknown } } | undefined)?.taint;
  return taint && typeof taint.key === 'string' && typeof taint.effect === 'string'
    ? { taint: { key: taint.key, effect: taint.effect } }
    : {};
}

export const toPluginRecord = (r: KubevirtRecord): PluginRecord =>
  JSON.parse(JSON.stringify(r)) as PluginRecord;
