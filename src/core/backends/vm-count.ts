// The one count of VMs on a host (issue 52 item 2), from what the plugins say of each workload's
// presence (src/plugins/on-host.ts decides it). Two questions stand on it and stay apart: what is
// on the host (this: every VM there, stopped ones too, which a gate nobody keeps must not be dropped
// under) and what a drain must still move (gate/step.ts toMove: a stopped server may be moved cold
// or left there by policy).
import type { Plan, PlannedWorkload, WorkloadProgress } from './plugin.ts';

export interface VmCount {
  /** plugin/name of each VM on the host. */
  readonly names: readonly string[];
  /** How many of them are stopped. */
  readonly stopped: number;
}

/** On its host per its plan line. */
export const planOnHost = (w: Pick<PlannedWorkload, 'presence'>): boolean => w.presence !== 'gone';

/** Still on its host per its progress: not moved off it and not gone. */
export const progressOnHost = (w: Pick<WorkloadProgress, 'state' | 'presence'>): boolean =>
  w.state !== 'succeeded' && w.presence !== 'gone';

/** The VMs the plans list on the host. */
export function countPlans(plans: readonly Plan[]): VmCount {
  const here = plans.flatMap((p) => p.workloads.filter(planOnHost).map((w) => ({ p: p.plugin, w })));
  return {
    names: here.map(({ p, w }) => `${p}/${w.name}`),
    stopped: here.filter(({ w }) => w.presence === 'stopped').length,
  };
}

/** One plugin's VMs still on the host, by its progress. */
export function countItems(items: readonly WorkloadProgress[]): { onHost: number; stopped: number } {
  const here = items.filter(progressOnHost);
  return { onHost: here.length, stopped: here.filter((w) => w.presence === 'stopped').length };
}

/** "1 VM", "3 VMs", "3 VMs (of them 1 stopped)"; `then` goes inside the parentheses ("…: a, b"). */
export function vmsText(n: number, stopped: number, then = ''): string {
  const vms = `${n} VM${n === 1 ? '' : 's'}`;
  if (stopped > 0) return `${vms} (of them ${stopped} stopped${then ? `: ${then}` : ''})`;
  return then ? `${vms} (${then})` : vms;
}
