// What is still on a node's host, as the plugins list it: the VMs a drain would take down. Asked by
// `drainer release` before it opens a gate, and by an agent that stops for good before it drops one.
import type { PluginHost } from '../backends/host.ts';
import { toMove } from './step.ts';

/** What is still on the host: workload names (plugin/name), or why that could not be found out. */
export interface Remaining {
  readonly names: readonly string[];
  readonly unknown?: string;
}

const FIRST = 5;

const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';

/**
 * What the plugins list on the node's host now; a plugin that cannot be asked makes it unknown.
 * `every`: each workload on the host, also one drainer stopped there (its mark says it runs again
 * there), which a gate nobody keeps must not be dropped under.
 */
export async function remainingOn(
  host: PluginHost,
  node: string,
  signal: AbortSignal,
  opts: { every?: boolean } = {},
): Promise<Remaining> {
  const results = await host.planAll({ name: node }, signal, { capacity: false });
  const failed = results.find((r) => r.error !== undefined);
  if (failed) return { names: [], unknown: `${failed.plugin}: ${firstLine(failed.error)}` };
  const plans = results.flatMap((r) => (r.plan ? [r.plan] : []));
  if (!opts.every) return { names: toMove(plans) };
  return { names: plans.flatMap((p) => p.workloads.map((w) => `${p.plugin}/${w.name}`)) };
}

/** "13 VMs (nova/a, nova/b, … and 8 more)" */
export function remainingText(r: Remaining): string {
  if (r.unknown !== undefined) return `an unknown number of VMs (${r.unknown})`;
  const n = r.names.length;
  const shown = r.names.slice(0, FIRST).join(', ');
  return `${n} VM${n === 1 ? '' : 's'} (${shown}${n > FIRST ? ` and ${n - FIRST} more` : ''})`;
}

/** Something (or nobody knows what) is still on the host. */
export const anyLeft = (r: Remaining): boolean => r.unknown !== undefined || r.names.length > 0;
