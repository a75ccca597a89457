// Fleet tools that give up on a held drain, found before they do (issue 50 item 2). Cluster API
// deletes a Machine's node once its nodeDrainTimeout has passed (counted from the drain's start,
// after every pre-drain hook is gone); Karpenter deletes a node's pods whatever their budgets once
// its NodePool's terminationGracePeriod has passed. Either takes the VMs still on the host down.
// (machine-api, openshift/machine-api, drains until it succeeds: no timeout to find.) Each is
// compared with how long drainer's own deadlines let the evacuation take. Pure.
import type { Config } from '../../config/schema.ts';
import { countPlans } from '../backends/vm-count.ts';
import type { Plan } from '../backends/plugin.ts';

/** A timeout a fleet tool applies to this node's drain. */
export interface ToolTimeout {
  readonly tool: 'Cluster API' | 'Karpenter';
  /** "Machine fleet/hv-a", "NodePool default". */
  readonly object: string;
  /** Where it is set: "nodeDrainTimeout (MachineDeployment fleet/hv)". */
  readonly field: string;
  readonly seconds: number;
  /** Cluster API with drainer's pre-drain hook on the Machine: the timeout starts once the VMs are gone. */
  readonly hooked?: boolean;
}

/** How long drainer's own deadlines let the node's evacuation take. */
export interface EvacuationBound {
  readonly seconds: number;
  /** "5 VMs, 1 at a time, up to 30m each". */
  readonly why: string;
}

/** KubeVirt moves this many VMIs out of a node at once by default (parallelOutboundMigrationsPerNode). */
const KUBEVIRT_OUTBOUND = 2;
/** KubeVirt's least per-VMI deadline (150 s per GB, a 1 GB guest) when none is configured. */
const KUBEVIRT_LEAST_S = 150;

/** Go's duration text as Kubernetes objects carry it ("1h30m", "90s", "500ms"); undefined if not one. */
export function goDurationSeconds(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * (unit[p[2] ?? 's'] ?? 0), 0);
}

/** "2h30m", "45s" */
export function durationText(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  return [h ? `${h}h` : '', m ? `${m}m` : '', rest || s === 0 ? `${rest}s` : ''].join('');
}

/** drainer's per-VM deadlines and moves in flight, per plugin, from its config. */
export interface Deadlines {
  readonly novaAtOnce: number;
  readonly novaEach: number;
  readonly kubevirtEach: number;
}

export const deadlinesOf = (config: Pick<Config, 'nova' | 'kubevirt'>): Deadlines => ({
  novaAtOnce: config.nova.maxConcurrentMigrations,
  novaEach: config.nova.migrationTimeout,
  kubevirtEach: config.kubevirt.migrationTimeout ?? KUBEVIRT_LEAST_S,
});

/** The longest moving these VMs (per plugin) may take by drainer's per-VM deadlines. */
export function boundOf(
  counts: readonly { plugin: string; vms: number }[],
  d: Deadlines,
): EvacuationBound | undefined {
  let seconds = 0;
  const why: string[] = [];
  for (const { plugin, vms: n } of counts) {
    if (!n) continue;
    const [at, each] = plugin === 'nova' ? [d.novaAtOnce, d.novaEach] : [KUBEVIRT_OUTBOUND, d.kubevirtEach];
    seconds += Math.ceil(n / at) * each;
    why.push(`${n} ${plugin} VM${n === 1 ? '' : 's'}, ${at} at a time, up to ${durationText(each)} each`);
  }
  return seconds ? { seconds, why: why.join('; ') } : undefined;
}

/** The longest the evacuation of what the plans list may take by drainer's per-VM deadlines. */
export const evacuationBound = (plans: readonly Plan[], config: Config): EvacuationBound | undefined =>
  boundOf(
    plans.map((p) => ({ plugin: p.plugin, vms: countPlans([p]).names.length })),
    deadlinesOf(config),
  );

/** Each tool that would delete the node with VMs on it: what it would do, and what to change. */
export function shortTimeouts(
  bound: EvacuationBound | undefined,
  timeouts: readonly ToolTimeout[],
): { readonly text: string; readonly fix: string }[] {
  if (!bound) return [];
  return timeouts.flatMap((t) => {
    if (t.seconds <= 0 || t.seconds >= bound.seconds || t.hooked) return [];
    const head = `${t.tool}: ${t.object} has ${t.field} ${durationText(t.seconds)}, shorter than this node's evacuation may take (${durationText(bound.seconds)}: ${bound.why})`;
    return [{ text: `${head}: ${t.tool} would delete the node with VMs on it`, fix: FIX[t.tool] }];
  });
}

/** One line per tool that would delete the node with VMs on it, with what to change. */
export const timeoutFindings = (
  bound: EvacuationBound | undefined,
  timeouts: readonly ToolTimeout[],
): string[] => shortTimeouts(bound, timeouts).map((f) => `${f.text}; ${f.fix}`);

const FIX: Record<ToolTimeout['tool'], string> = {
  'Cluster API':
    "turn drainer's pre-drain hook on (clusterAPI.preDrainHook: true, the default, where its agent sees the Machine), or unset nodeDrainTimeout (0: no timeout) in the MachineDeployment's template",
  Karpenter:
    'raise spec.template.spec.terminationGracePeriod of the NodePool above it, or unset it (no timeout)',
};
