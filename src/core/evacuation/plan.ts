// Step 2 of design.md §1: ask the plugins for their plans, and say what they found.
import { isAuthError } from '../../errors.ts';
import { nodeRef } from '../backends/node-policy.ts';
import type { Plan } from '../backends/plugin.ts';
import { summarizePlans } from '../backends/progress-events.ts';
import type { NodeRun } from '../agent/run-context.ts';
import type { EvacuationControl } from './control.ts';

/** What planning found: the plans, or why there are none. */
export interface Planned {
  readonly plans?: Plan[];
  readonly error?: string;
  /** The cloud rejected the credentials: reported as CloudAuthFailed, not as a capacity problem. */
  readonly authFailed?: boolean;
}

/** The plugins' plans for this node, as the evacuation asks for them (the capacity check as configured). */
export function askPlans(run: NodeRun, signal: AbortSignal): Promise<Plan[]> {
  const capacity = run.deps.config.evacuation.capacityCheck !== 'off';
  return run.deps.host.plan(nodeRef(run.nodeName, run.node), signal, { capacity });
}

/**
 * 2. plan (a plugin that cannot plan still gets to try, and fails in its Outcome, unless the
 * capacity check refuses an unknown capacity). Undefined when stopped.
 */
export async function plan(
  run: NodeRun,
  ctl: EvacuationControl,
  fresh: boolean,
): Promise<Planned | undefined> {
  try {
    const plans = await askPlans(run, ctl.signal);
    const { message, blockers } = summarizePlans(plans);
    if (fresh) await run.event('Normal', 'EvacuationPlanned', message);
    if (blockers.length)
      await run.event('Warning', 'EvacuationBlocked', `cannot move: ${blockers.join('; ')}`);
    return { plans };
  } catch (err) {
    if (ctl.signal.aborted) return undefined;
    run.log.warn({ err }, 'planning failed');
    return {
      error: err instanceof Error ? err.message : String(err),
      ...(isAuthError(err) ? { authFailed: true } : {}),
    };
  }
}
