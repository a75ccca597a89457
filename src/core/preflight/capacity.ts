// The capacity pre-flight (design.md §1 step 2b): the plugins' verdicts, read against
// evacuation.capacityCheck, decide whether the evacuation may make its first change.
import type { Plan } from '../backends/plugin.ts';
import type { NodeRun } from '../agent/run-context.ts';

export type CapacityMode = 'enforce' | 'warn' | 'off';

export interface CapacityDecision {
  /** enforce: refuse with this text (InsufficientCapacity); nothing has been changed yet. */
  readonly refuse?: string;
  /** warn (or a shortfall the mode lets pass): an InsufficientCapacity Event, then go on. */
  readonly warn?: string;
  /** The check could not be made at all (no Placement): said, never refusing. */
  readonly unchecked?: string;
}

/**
 * `plans` undefined means planning itself failed: the capacity is unknown, which `enforce`
 * never lets pass silently.
 */
export function judgeCapacity(
  mode: CapacityMode,
  plans: readonly Plan[] | undefined,
  planError?: string,
): CapacityDecision {
  if (mode === 'off') return {};
  const problems: string[] = [];
  const unchecked: string[] = [];
  if (!plans) problems.push(`capacity check could not run: planning failed: ${planError ?? 'unknown error'}`);
  for (const p of plans ?? []) {
    const v = p.capacity;
    if (!v || v.status === 'fits') continue;
    if (v.status === 'short') problems.push(v.message);
    else if (v.reason === 'unavailable')
      problems.push(`${p.plugin}: capacity check could not run: ${v.message}`);
    else unchecked.push(`${p.plugin}: ${v.message}`);
  }
  const text = problems.join('; ');
  return {
    ...(text ? (mode === 'enforce' ? { refuse: text } : { warn: text }) : {}),
    ...(unchecked.length ? { unchecked: unchecked.join('; ') } : {}),
  };
}

/**
 * Runs the decision for one attempt: Events for a warning, a log line for an unchecked cloud.
 * Answers the refusal text (enforce), or undefined to go on. A resumed evacuation has changed
 * things already: refusing would only strand it, so there a shortfall is a warning.
 */
export async function capacityGate(
  run: NodeRun,
  planned: { plans?: readonly Plan[]; error?: string },
  fresh: boolean,
): Promise<string | undefined> {
  const mode = run.deps.config.evacuation.capacityCheck;
  const d = judgeCapacity(fresh ? mode : mode === 'off' ? 'off' : 'warn', planned.plans, planned.error);
  if (d.unchecked && fresh) run.log.warn({ node: run.nodeName }, `capacity not checked: ${d.unchecked}`);
  if (d.warn) await run.event('Warning', 'InsufficientCapacity', d.warn);
  return d.refuse;
}
