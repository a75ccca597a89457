// A record this version cannot read (bad JSON, an unknown phase, a newer schema): the agent never
// guesses at it, never overwrites or deletes it, and says so. Only `drainer restore --force` acts:
// it undoes what is recognisably drainer's and keeps the record aside.
import { DrainerError } from '../../errors.ts';
import { UNREADABLE_ANNOTATION } from '../../names.ts';
import { MemoryRecordStore, type RestoreResult } from '../backends/host.ts';
import type { RunResult } from '../agent/queue.ts';
import { EVACUATING_TAINT, STATE_ANNOTATION, unreadableText } from './record.ts';
import type { NodeRun } from '../agent/run-context.ts';
import { restoreTarget } from '../restore/still-evacuating.ts';

/** Stops acting on the node: a log line, an Event and the metric name the problem and the way out. */
export async function reportUnreadable(run: NodeRun, problem: string, resync: RunResult): Promise<RunResult> {
  const text = unreadableText(run.nodeName, problem);
  run.log.error({ node: run.nodeName }, text);
  run.deps.metrics?.recordUnreadable?.(true);
  await run.event('Warning', 'RecordUnreadable', text);
  return resync;
}

/**
 * Restores without a readable record: the plugins undo what they recognise as theirs (nova: the
 * service whose disabled_reason carries our prefix), then our taint goes. With an unreadable
 * record (`unreadable` is its text) the record is moved to UNREADABLE_ANNOTATION, never dropped.
 * No success Event unless every plugin restored.
 */
export async function forceRestore(run: NodeRun, unreadable: string | undefined): Promise<RestoreResult[]> {
  const { cluster, host, config } = run.deps;
  // as every restore: the gate holds before the node is given back (a node still to be evacuated
  // takes nothing back), and an operator's release (of whatever maintenance) is taken off
  const { ref, kept } = await restoreTarget(run);
  const results = await host.restore(ref, {
    signal: run.signal,
    dryRun: config.dryRun,
    records: new MemoryRecordStore(),
  });
  const failed = results.filter((r) => !r.ok);
  if (failed.length) {
    const text = failed.map((r) => `${r.plugin}: ${r.message ?? 'restore failed'}`).join('; ');
    throw new DrainerError('API', `forced restore of node ${run.nodeName} incomplete: ${text}`);
  }
  if (config.dryRun) return results;
  const undone = results.map((r) => r.plugin);
  const taints = run.node.spec?.taints ?? [];
  if (taints.some((t) => t.key === EVACUATING_TAINT.key && t.effect === EVACUATING_TAINT.effect)) {
    await cluster.removeTaint(run.nodeName, EVACUATING_TAINT.key, EVACUATING_TAINT.effect);
    undone.push(`taint ${EVACUATING_TAINT.key}`);
  }
  if (unreadable !== undefined) {
    // copy first, then remove: a crash in between leaves both, never neither
    await cluster.setNodeAnnotation(run.nodeName, UNREADABLE_ANNOTATION, unreadable);
    await cluster.setNodeAnnotation(run.nodeName, STATE_ANNOTATION, null);
    run.deps.metrics?.recordUnreadable?.(false);
  }
  const aside = unreadable !== undefined ? `; the unreadable record is kept in ${UNREADABLE_ANNOTATION}` : '';
  await run.event(
    kept ? 'Warning' : 'Normal',
    'RestoreForced',
    `node ${run.nodeName}: forced restore without a readable record (${undone.join(', ') || "nothing recognisably drainer's to undo"})${aside}${kept ? `, but ${kept}` : ''}`,
  );
  return results;
}
