// A restore of a node still to be evacuated (cordoned by someone else, a NodeMaintenance, a trigger
// taint) gives the host nothing back: `drainer restore`, forced or not, may come before the uncordon,
// while a drain may run (chaos seed 16: kured's drain returned over a server a forced restore had
// started on the host). Every restore path asks here, so none forgets the rule.
import type { NodeRef } from '../backends/plugin.ts';
import type { NodeRun } from '../agent/run-context.ts';
import { holdGate } from '../gate/step.ts';
import { desiredOf } from '../agent/desired.ts';

export interface RestoreTarget {
  /** What the plugins restore: `inMaintenance` keeps stopped servers stopped, a disabled service disabled. */
  readonly ref: NodeRef;
  /** The trigger that still wants the node evacuated, and what that keeps ("… stay stopped"); undefined when in service. */
  readonly kept?: string;
}

/**
 * The node as a restore gives it back, after the drain gate holds (or holdTimeout passed). A node
 * still to be evacuated does not wait for the gate: its agent would release it meanwhile, and
 * nothing comes back to the host for a drain to pass over.
 */
export async function restoreTarget(run: NodeRun): Promise<RestoreTarget> {
  const desired = desiredOf(run);
  const trigger = desired.state === 'Evacuated' ? desired.trigger : undefined;
  await holdGate(run, !trigger);
  if (!trigger) return { ref: { name: run.nodeName } };
  const kept = `still to be evacuated (${trigger}; a drain may run): the host takes no VMs back until its restore after that (the VMs drainer stopped on it stay stopped, a hypervisor service drainer disabled stays disabled)`;
  run.log.warn(`node ${run.nodeName} ${kept}`);
  return { ref: { name: run.nodeName, inMaintenance: true }, kept };
}
