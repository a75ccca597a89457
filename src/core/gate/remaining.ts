// What is still on a node's host, as the plugins list it: the VMs a drain would take down. Asked by
// `drainer release` before it opens a gate, and by an agent that stops for good before it drops one.
import type { PluginHost } from '../backends/host.ts';
import { countPlans, vmsText } from '../backends/vm-count.ts';

/** What is still on the host: workload names (plugin/name), or why that could not be found out. */
export interface Remaining {
  readonly names: readonly string[];
  /** How many of `names` are stopped (absent: none, or not asked). */
  readonly stopped?: number;
  readonly unknown?: string;
}

const FIRST = 5;

const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';

/**
 * Every VM the plugins list on the node's host now (vm-count.ts), stopped ones too (a server
 * drainer stopped there runs again there), which a drain or a gate nobody keeps must not go on
 * under; a plugin that cannot be asked makes it unknown.
 */
export async function remainingOn(host: PluginHost, node: string, signal: AbortSignal): Promise<Remaining> {
  const results = await host.planAll({ name: node }, signal, { capacity: false });
  const failed = results.find((r) => r.error !== undefined);
  if (failed) return { names: [], unknown: `${failed.plugin}: ${firstLine(failed.error)}` };
  return countPlans(results.flatMap((r) => (r.plan ? [r.plan] : [])));
}

/** "13 VMs (nova/a, nova/b, … and 8 more)", "3 VMs (of them 1 stopped: nova/a, …)" */
export function remainingText(r: Remaining): string {
  if (r.unknown !== undefined) return `an unknown number of VMs (${r.unknown})`;
  const n = r.names.length;
  const shown = r.names.slice(0, FIRST).join(', ');
  return vmsText(n, r.stopped ?? 0, `${shown}${n > FIRST ? ` and ${n - FIRST} more` : ''}`);
}

/** Something (or nobody knows what) is still on the host. */
export const anyLeft = (r: Remaining): boolean => r.unknown !== undefined || r.names.length > 0;
