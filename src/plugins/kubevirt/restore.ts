// The KubeVirt plugin's way back: its restore (remove the drain taint drainer added, start the VMs
// it stopped), and its stranded check (a Node with no record: the VMs whose stop mark names it, or
// names a Node that no longer exists, are started once the node is in service).
import type { NodeRef, RestoreContext, StrandedChange, StrandedOptions } from '../../core/backends/plugin.ts';
import { keeper } from './keeper.ts';
import { readRecord, sameVm } from './record.ts';
import { markedFor, restart, restartOne, type RestartDeps } from './restart.ts';
import { Triggers } from './triggers.ts';
import { STOP_MARK_ANNOTATION, type VmStopMark } from './vm-mark.ts';

/** What a restore and a stranded check wait with (RestartDeps without the record, which each brings). */
export type WaitDeps = Omit<RestartDeps, 'record' | 'log'>;

export async function restoreNode(node: NodeRef, ctx: RestoreContext, deps: WaitDeps): Promise<void> {
  const record = readRecord(ctx.record);
  if (!record.taint && !record.stopped) return;
  if (ctx.dryRun) {
    ctx.log.info(
      { taint: record.taint?.key, start: record.stopped?.map((s) => `${s.namespace}/${s.name}`) },
      'would remove the drain taint drainer added and start the VirtualMachines it stopped',
    );
    return;
  }
  const kept = keeper(record, (r) => ctx.save(r));
  const triggers = new Triggers({
    api: deps.api,
    node: node.name,
    log: ctx.log,
    drainTaintKey: record.taint?.key ?? '',
    record: kept,
  });
  await triggers.removeOurTaint(ctx.signal);
  const ours = [...(record.stopped ?? [])];
  await restart({ ...deps, record: kept, log: ctx.log }, ctx.signal);
  // and the VMs whose mark names this node though the record does not (a record written anew)
  const marks = (await markedFor(deps.api, node.name, false, ctx.signal)).filter(
    (m) => !ours.some((s) => sameVm(s, m)),
  );
  for (const m of marks) await restartOne(m, { ...deps, record: kept, log: ctx.log }, ctx.signal);
}

const names = (marks: readonly VmStopMark[]) => marks.map((m) => `${m.namespace}/${m.name}`).join(', ');
const reasonOf = (marks: readonly VmStopMark[]) =>
  `annotation ${STOP_MARK_ANNOTATION}: ${[...new Set(marks.map((m) => `stopped for node ${m.node} at ${m.at}`))].join('; ')}`;

/** No record on the node: the VMs drainer stopped for it (or for a Node now gone) are started when it is in service. */
export async function strandedVms(
  node: NodeRef,
  opts: StrandedOptions,
  deps: WaitDeps,
): Promise<StrandedChange | undefined> {
  const marks = await markedFor(deps.api, node.name, true, opts.signal);
  if (!marks.length) return undefined;
  if (!opts.inService || opts.dryRun)
    return {
      what: `VirtualMachine(s) drainer stopped: ${names(marks)}`,
      reason: reasonOf(marks),
      restored: false,
    };
  const record = keeper({}, async () => undefined); // no record owns them: the marks do
  const started: VmStopMark[] = [];
  for (const m of marks)
    if ((await restartOne(m, { ...deps, record, log: opts.log }, opts.signal)) === 'running') started.push(m);
  if (!started.length) return undefined; // each one its owner's now: marks taken off, nothing to start
  return {
    what: `VirtualMachine(s) drainer stopped: ${names(started)}`,
    reason: reasonOf(started),
    restored: true,
  };
}
