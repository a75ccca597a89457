import type { PluginRecord } from '../../core/backends/plugin.ts';

/**
 * The KubeVirt plugin's piece of the Node record: only what restore must undo. Per-VMI progress is
 * re-read from the cluster on every run (VMIs and their migrations say where each one is), so a
 * resumed or retried evacuation never trusts stale timestamps.
 */
export interface KubevirtRecord {
  /** The drain taint we added (restore removes it only when set). */
  taint?: { key: string; effect: string };
  /** VirtualMachines drainer stopped (drainer.dev/maintenance: stop): restore starts them again. */
  stopped?: { namespace: string; name: string }[];
}

const isRef = (v: unknown): v is { namespace: string; name: string } =>
  !!v &&
  typeof (v as { namespace?: unknown }).namespace === 'string' &&
  typeof (v as { name?: unknown }).name === 'string';

export function readRecord(r: PluginRecord | undefined): KubevirtRecord {
  const raw = r as { taint?: { key?: unknown; effect?: unknown }; stopped?: unknown } | undefined;
  const taint = raw?.taint;
  const stopped = Array.isArray(raw?.stopped) ? raw.stopped.filter(isRef) : [];
  return {
    ...(taint && typeof taint.key === 'string' && typeof taint.effect === 'string'
      ? { taint: { key: taint.key, effect: taint.effect } }
      : {}),
    ...(stopped.length ? { stopped: stopped.map(({ namespace, name }) => ({ namespace, name })) } : {}),
  };
}

export const toPluginRecord = (r: KubevirtRecord): PluginRecord =>
  JSON.parse(JSON.stringify(r)) as PluginRecord;
