// Back to service: plugin restores (only what their records say), our taint off, uncordon only
// when drainer cordoned, NodeMaintenance finalizers released, record cleared — in that order, so
// a crash in between leaves a record that says what is still to undo.
import { DrainerError } from '../../errors.ts';
import type { RestoreResult } from '../backends/host.ts';
import { releaseMaintenances } from '../maintenance/maintenance-sync.ts';
import { EVACUATING_TAINT, type NodeRecord } from '../record/record.ts';
import { restoreTarget } from './still-evacuating.ts';
import { START_NOW_ANNOTATION } from '../fleet/start-now.ts';
import type { NodeRun } from '../agent/run-context.ts';
import type { RunResult } from '../agent/queue.ts';

/** Restores the node; answers the plugins' results with the next run (a resync). */
export async function restoreNode(run: NodeRun): Promise<RunResult & { results: RestoreResult[] }> {
  const { cluster, host, config, metrics } = run.deps;
  const rec = run.store.current;
  if (!rec) return { results: [] };
  // uncordon while Queued leaves the fleet queue here: the queue label goes with this write
  if (rec.phase !== 'Restoring') await run.store.update({ phase: 'Restoring' });
  metrics?.phase('Restoring');
  // the drain gate holds (pod Running and Ready, PDB observed) before a plugin gives the node back
  // (nova-compute enabled, taint off, uncordon), or holdTimeout has passed (a warning Event)
  const { ref, kept } = await restoreTarget(run);
  const results = await host.restore(ref, {
    signal: run.signal,
    dryRun: config.dryRun,
    records: run.store,
  });
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
