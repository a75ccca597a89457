import type { PluginRecord } from '../../core/backends/plugin.ts';

/** A VirtualMachine drainer stopped, and what restore needs to give it back as it was. */
export interface StoppedVm {
  namespace: string;
  name: string;
  /** Its run strategy before drainer's stop (KubeVirt's stop turns Always and Once into Halted). */
  runStrategy?: string;
  /** The uid of the VMI drainer stopped: until that VMI is final the stop is still under way. */
  vmi?: string;
}

/**
 * The KubeVirt plugin's piece of the Node record: what restore must undo, and the clocks its owners
 * are given. Per-VMI progress is re-read from the cluster on every run (VMIs and their migrations
 * say where each one is), so a resumed or retried evacuation never trusts stale timestamps.
 */
export interface KubevirtRecord {
  /** The drain taint we added (restore removes it only when set). */
  taint?: { key: string; effect: string };
  /** VirtualMachines drainer stopped (drainer.dev/maintenance: stop): restore starts them again. */
  stopped?: StoppedVm[];
  /** notify: when each VMI's owner was first asked to move it (namespace/name → epoch ms). */
  asked?: Record<string, number>;
}

const str = (v: unknown): v is string => typeof v === 'string';

function readStopped(v: unknown): StoppedVm | undefined {
  const r = v as Partial<Record<keyof StoppedVm, unknown>> | undefined;
  if (!r || !str(r.namespace) || !str(r.name)) return undefined;
  return {
    namespace: r.namespace,
    name: r.name,
    ...(str(r.runStrategy) ? { runStrategy: r.runStrategy } : {}),
    ...(str(r.vmi) ? { vmi: r.vmi } : {}),
  };
}

function readAsked(v: unknown): Record<string, number> {
  if (!v || typeof v !== 'object') return {};
  return Object.fromEntries(
    Object.entries(v).filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1])),
  );
}

export function readRecord(r: PluginRecord | undefined): KubevirtRecord {
  const raw = r as
    { taint?: { key?: unknown; effect?: unknown }; stopped?: unknown; asked?: unknown } | undefined;
  const taint = raw?.taint;
  const stopped = Array.isArray(raw?.stopped) ? raw.stopped.flatMap((s) => readStopped(s) ?? []) : [];
  const asked = readAsked(raw?.asked);
  return {
    ...(taint && str(taint.key) && str(taint.effect)
      ? { taint: { key: taint.key, effect: taint.effect } }
      : {}),
    ...(stopped.length ? { stopped } : {}),
    ...(Object.keys(asked).length ? { asked } : {}),
  };
}

export const toPluginRecord = (r: KubevirtRecord): PluginRecord =>
  JSON.parse(JSON.stringify(r)) as PluginRecord;

export const sameVm = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) =>
  a.namespace === b.namespace && a.name === b.name;
