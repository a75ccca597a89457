// After Evacuated (issue 23): at each resync the node's host is listed once (the plugins' plans,
// without the capacity check). A workload that has to move and is there again (forced onto the
// host after the final listing) reopens the evacuation, and the drain gate is held while it is.
// A declared reboot leaves the VMs drainer stopped on the host, and their owners can start them
// there at any moment, with no placement Nova would refuse: its host is listed far more often.
import { nodeRef } from '../backends/node-policy.ts';
import type { NodeRun } from '../agent/run-context.ts';
import { stillOnHost, toMove } from './step.ts';

/**
 * How often an Evacuated node whose maintenance is a declared reboot has its host listed: a server
 * its owner starts there after the gate opened holds the gate again within this, not a resync
 * (300 s by default) later, while a kured or Cluster API drain may be about to begin. One listing.
 */
export const REBOOT_RECHECK_MS = 10_000;

/** Ms between two listings of this Evacuated node's host. */
export const recheckEveryMs = (run: NodeRun, resyncMs: number): number =>
  nodeRef(run.nodeName, run.node).reboot ? Math.min(resyncMs, REBOOT_RECHECK_MS) : resyncMs;

/** The workloads on an Evacuated node's host that have to move (empty: still evacuated). */
export async function strayOnHost(run: NodeRun): Promise<string[]> {
  // with the node's policy: a server stopped for a declared reboot stays, and is no stray
  const plans = await run.deps.host.plan(nodeRef(run.nodeName, run.node), run.signal, { capacity: false });
  return toMove(plans);
}

/** Back to Evacuating: the gate held again, then the evacuation resumes and moves them. */
export async function reopen(run: NodeRun, stray: readonly string[]): Promise<void> {
  run.log.warn({ node: run.nodeName, stray }, 'found on the host after Evacuated: moving them');
  // the outcomes said everything had moved: no longer true (the gate holds with this write)
  await run.store.update({ phase: 'Evacuating', outcomes: undefined });
  run.deps.metrics?.phase('Evacuating');
  await run.event(
    'Warning',
    'DrainGateHeld',
    `drains of ${run.nodeName} wait again: ${stillOnHost(stray)} after it was evacuated`,
  );
}
