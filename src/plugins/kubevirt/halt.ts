// drainer.dev/maintenance: stop. A VMI owned by a VirtualMachine is stopped through the VM (PUT
// …/virtualmachines/{name}/stop: KubeVirt halts it and the VMI goes), recorded first, and restore
// starts the VM again. A VMI without a VirtualMachine cannot be started again: its launcher pod is
// deleted, as a node shutdown would (the nonMigratable: shutdown way), and it stays stopped.
import type { WorkloadProgress } from '../../core/backends/plugin.ts';
import { isConflictError, isNotFoundError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Classified } from './classify.ts';
import { activeLauncher } from './pods.ts';
import type { KubevirtApi } from './port.ts';
import type { KubevirtRecord } from './record.ts';
import { stopProgress, stoppedHere, type StopDeps } from './stopping.ts';
import type { RecordKeeper } from './triggers.ts';

export interface HaltDeps extends StopDeps {
  readonly record: RecordKeeper;
}

/** Stops each VMI, then waits until none runs on the node (or the deadline). */
export async function halt(
  vmis: readonly Classified[],
  deps: HaltDeps,
  signal: AbortSignal,
): Promise<WorkloadProgress[]> {
  const { api, node, log, now, record } = deps;
  const started = now();
  const pods = await api.listVmPods(node, signal);
  for (const c of vmis) {
    const ns = c.vmi.metadata.namespace ?? 'default';
    if (c.vm) {
      const ref = { namespace: ns, name: c.vm };
      const stopped = record.current.stopped ?? [];
      if (!stopped.some((s) => s.namespace === ns && s.name === c.vm)) {
        const next: KubevirtRecord = { ...record.current, stopped: [...stopped, ref] };
        await record.save(next); // before the change: restore must know to start it
      }
      log.info({ vmi: c.key, vm: c.vm }, 'stopping the VirtualMachine (drainer.dev/maintenance: stop)');
      await api.vmAction(ns, c.vm, 'stop', signal);
    } else {
      const pod = activeLauncher(pods, c.vmi.metadata.uid);
      log.warn({ vmi: c.key }, 'stopping a VMI without a VirtualMachine (drainer.dev/maintenance: stop)');
      if (pod) await api.deletePod(pod.metadata.namespace ?? ns, pod.metadata.name, signal);
    }
  }
  const left = new Set(vmis.map((c) => c.key));
  while (left.size > 0 && !signal.aborted && now() - started < deps.timeoutMs) {
    await deps.sleep(deps.pollMs, signal);
    for (const c of vmis) {
      if (!left.has(c.key)) continue;
      const v = await api.getVmi(c.vmi.metadata.namespace ?? 'default', c.vmi.metadata.name, signal);
      if (stoppedHere(v, node)) left.delete(c.key);
    }
  }
  return stopProgress(vmis, left, started, deps, {
    failed: () => 'drainer.dev/maintenance: stop: did not stop in time',
    stopped: (c) =>
      c.vm
        ? `stopped (drainer.dev/maintenance: stop); VirtualMachine ${c.vm} is started again on restore`
        : 'stopped (drainer.dev/maintenance: stop); without a VirtualMachine it cannot be started again',
  });
}

/** Restore: starts the VirtualMachines drainer stopped, forgetting each once started (or gone). */
export async function restart(
  api: KubevirtApi,
  record: RecordKeeper,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  for (const ref of record.current.stopped ?? []) {
    try {
      await api.vmAction(ref.namespace, ref.name, 'start', signal);
      log.info({ vm: `${ref.namespace}/${ref.name}` }, 'VirtualMachine started again');
    } catch (err) {
      // already running (409) or deleted (404): nothing left to undo; anything else is retried
      if (!isConflictError(err) && !isNotFoundError(err)) throw err;
    }
    const rest = (record.current.stopped ?? []).filter(
      (s) => !(s.namespace === ref.namespace && s.name === ref.name),
    );
    const { stopped: _gone, ...others } = record.current;
    await record.save(rest.length ? { ...others, stopped: rest } : others);
  }
}
