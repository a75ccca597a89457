// Blockers before the first change (issue 23 item 6): a workload that must move and cannot (a
// non-migratable VMI under nonMigratable: block, a server whose state cannot be migrated, missing
// rights a plan reports) refuses the evacuation before anything on the node changes, as the
// capacity verdict does. Re-checked at the next attempt (resync).
import { migrationMode } from '../backends/node-policy.ts';
import type { Plan } from '../backends/plugin.ts';
import type { NodeRun } from '../agent/run-context.ts';

/** The blocked workloads of the plans, one line each ("kubevirt: default/vm-legacy (reason)"). */
export function blockedWorkloads(plans: readonly Plan[]): string[] {
  return plans.flatMap((p) =>
    p.workloads
      .filter((w) => w.action === 'none')
      .map((w) => `${p.plugin}: ${w.name} (${w.blocker ?? 'blocked'})`),
  );
}

/**
 * The refusal text, or undefined to go on. Only a fresh attempt is refused (a resumed one has
 * changed things already), and only when a blocked workload would fail the evacuation anyway
 * (drain.requirePluginsSucceeded): otherwise the operator has chosen to leave it behind.
 */
export function blockerGate(
  run: NodeRun,
  planned: { plans?: readonly Plan[] },
  fresh: boolean,
): string | undefined {
  if (!fresh || !planned.plans) return undefined;
  const mode = migrationMode(run.node);
  if ('invalid' in mode) return `refused before any change: ${mode.invalid}`;
  // plan-wide (missing rights: nothing on the host can be judged) refuse whatever the drain policy
  // (their messages name the plugin already)
  const planWide = planned.plans.flatMap((p) => (p.blockers ?? []).map((b) => b.message));
  if (planWide.length) return planWide.join('; ');
  if (!run.deps.config.drain.requirePluginsSucceeded) return undefined;
  const blocked = blockedWorkloads(planned.plans);
  if (!blocked.length) return undefined;
  return `refused before any change: ${blocked.length} workload(s) must move and cannot: ${blocked.join('; ')}`;
}
