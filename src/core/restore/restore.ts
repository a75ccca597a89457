// Back to service: plugin restores (only what their records say), our taint off, uncordon only
// when drainer cordoned, NodeMaintenance finalizers released, record cleared — in that order, so
// a crash in between leaves a record that says what is still to undo.
import { DrainerError } from '../../errors.ts';
import type { RestoreResult } from '../backends/host.ts';
import { releaseMaintenances } from '../maintenance/maintenance-sync.ts';
import { EVACUATING_TAINT, type NodeRecord } from '../record/record.ts';
import { holdGate } from '../gate/step.ts';
import { START_NOW_ANNOTATION } from '../fleet/start-now.ts';
import type { NodeRun } from '../agent/run-context.ts';
import type { RunResult } from '../agent/queue.ts';
import { desiredState } from '../agent/desired.ts';

/** Restores the node; answers the plugins' results with the next run (a resync). */
export async function restoreNode(run: NodeRun): Promise<RunResult & { results: RestoreResult[] }> {
  const { cluster, host, config, metrics } = run.deps;
  const rec = run.store.current;
  if (!rec) return { results: [] };
  // uncordon while Queued leaves the fleet queue here: the queue label goes with this write
  if (rec.phase !== 'Restoring') await run.store.update({ phase: 'Restoring' });
  metrics?.phase('Restoring');
  const trigger = stillInMaintenance(run);
  // the drain gate holds (pod Running and Ready, PDB observed) before a plugin gives the node back
  // (nova-compute enabled, taint off, uncordon), or holdTimeout has passed (a warning Event). A node
  // still to be evacuated takes nothing back: no wait (its agent would release the gate meanwhile)
  await holdGate(run, !trigger);

  const kept = trigger
    ? `still to be evacuated (${trigger}; a drain may run): the host takes no VMs back until its restore after that (the VMs drainer stopped on it stay stopped, a hypervisor service drainer disabled stays disabled)`
    : undefined;
  if (kept) run.log.warn(`node ${run.nodeName} ${kept}`);
  const results = await host.restore(
    { name: run.nodeName, ...(trigger ? { inMaintenance: true } : {}) },
    { signal: run.signal, dryRun: config.dryRun, records: run.store },
  );
  const failed = results.filter((r) => !r.ok);
  if (failed.length) {
    const text = failed.map((r) => `${r.plugin}: ${r.message ?? 'restore failed'}`).join('; ');
    await run.store.update({ lastError: text });
    // retried with backoff by the queue; the record keeps what is still to undo
    throw new DrainerError('API', `restore of node ${run.nodeName} incomplete: ${text}`);
  }

  if (
    (run.node.spec?.taints ?? []).some(
      (t) => t.key === EVACUATING_TAINT.key && t.effect === EVACUATING_TAINT.effect,
    )
  ) {
    await cluster.removeTaint(run.nodeName, EVACUATING_TAINT.key, EVACUATING_TAINT.effect);
  }
  const cordon = await uncordon(run, rec);
  await releaseMaintenances(run);
  await run.store.clear();
  // a start-now of this maintenance never outlives it (it would let a later cordon past a freeze)
  if (run.node.metadata?.annotations?.[START_NOW_ANNOTATION] !== undefined)
    await cluster.setNodeAnnotation(run.nodeName, START_NOW_ANNOTATION, null);
  metrics?.phase(undefined);
  const undone = [...results.map((r) => r.plugin), ...cordon];
  const what = `(${undone.join(', ') || 'nothing to undo'})`;
  await run.event(
    kept ? 'Warning' : 'Normal',
    'RestoreSucceeded',
    kept
      ? `node ${run.nodeName} restored ${what}, but ${kept}`
      : `node ${run.nodeName} back in service ${what}`,
  );
  return { requeueAfterMs: config.resyncInterval * 1000, results };
}

/**
 * The trigger that still wants the node evacuated (cordoned by someone else, a NodeMaintenance, a
 * trigger taint), or undefined. The agent restores only once there is none; `drainer restore --force`
 * may come before the uncordon, while a drain may run (chaos seed 16: kured's drain returned over a
 * server that restore had started on the host).
 */
function stillInMaintenance(run: NodeRun): string | undefined {
  const { config } = run.deps;
  const desired = desiredState({
    nodeName: run.nodeName,
    node: run.node,
    maintenances: run.maintenances,
    record: run.store.current,
    mode: config.nodeMaintenance.mode,
    taints: config.triggers?.taints ?? [],
  });
  return desired.state === 'Evacuated' ? desired.trigger : undefined;
}

/**
 * Only the cordon this maintenance made comes off: one lifted and put back since this pass read the
 * Node (an operator's, during the restore) stays. Answers what the RestoreSucceeded Event says of it.
 */
async function uncordon(run: NodeRun, rec: NodeRecord): Promise<string[]> {
  if (!rec.cordonedByUs || run.node.spec?.unschedulable !== true) return [];
  const r = await run.deps.cluster.uncordon(run.nodeName, run.node.metadata?.resourceVersion);
  if (r.done === 'kept') {
    run.log.info({ why: r.why }, 'cordon kept');
    return [`cordon kept: ${r.why}`];
  }
  if (r.done === 'not-cordoned') return [];
  if (r.unsure)
    run.log.warn({ why: r.unsure }, "uncordoned as drainer's cordon: whose it was could not be told");
  return ['uncordoned'];
}
