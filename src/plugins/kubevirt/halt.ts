// drainer.dev/maintenance: stop. A VMI owned by a VirtualMachine is stopped through the VM (PUT
// …/virtualmachines/{name}/stop), recorded first with its run strategy and the VMI it stops, and
// restore starts it again as it was (restart.ts). The VM also carries drainer's mark, set before the
// stop (vm-mark.ts), which outlives the Node and its record. A VMI without a VirtualMachine cannot be started
// again: its launcher pod is deleted, as a node shutdown would (the nonMigratable: shutdown way),
// and it stays stopped. What its owner did first (a stop, a delete) is the owner's: not recorded,
// not started on restore, and never reported as drainer's failure.
import type { WorkloadProgress } from '../../core/backends/plugin.ts';
import { isConflictError, isNotFoundError } from '../../errors.ts';
import type { Classified } from './classify.ts';
import { activeLauncher } from './pods.ts';
import { sameVm, type KubevirtRecord, type StoppedVm } from './record.ts';
import { stopProgress, stoppedHere, type StopDeps } from './stopping.ts';
import type { RecordKeeper } from './triggers.ts';
import type { VmLite } from './types.ts';
import { formatVmMark } from './vm-mark.ts';

export interface HaltDeps extends StopDeps {
  readonly record: RecordKeeper;
}

/** KubeVirt's reading of a VM's run strategy: spec.runStrategy, else spec.running, else Halted. */
export const runStrategyOf = (vm: VmLite): string =>
  vm.spec?.runStrategy ?? (vm.spec?.running === true ? 'Always' : 'Halted');

/** Why a VM is not drainer's to stop (or start again): its owner's doing. */
type OwnersDoing = 'stopped' | 'deleted';

/** Drops a VirtualMachine from the record's stopped list, and takes drainer's mark off it: drainer's claim ends. */
export async function forget(
  deps: { readonly record: RecordKeeper; readonly api: Pick<HaltDeps['api'], 'markVm'> },
  ref: { namespace: string; name: string },
  signal: AbortSignal,
): Promise<void> {
  await deps.api.markVm(ref.namespace, ref.name, null, signal); // 'gone': no VM, no mark
  const { record } = deps;
  const rest = (record.current.stopped ?? []).filter((s) => !sameVm(s, ref));
  if (rest.length === (record.current.stopped ?? []).length) return;
  const { stopped: _gone, ...others } = record.current;
  await record.save(rest.length ? { ...others, stopped: rest } : others);
}

/** Stops c's VirtualMachine, recorded first; undefined when drainer stopped it, else what its owner did. */
async function stopVm(c: Classified & { vm: string }, deps: HaltDeps, signal: AbortSignal) {
  const { api, log, record } = deps;
  const namespace = c.vmi.metadata.namespace ?? 'default';
  const ref = { namespace, name: c.vm };
  const vm = await api.getVm(namespace, c.vm, signal);
  if (!vm) return 'deleted' as const;
  const runStrategy = runStrategyOf(vm);
  if (runStrategy === 'Halted') return 'stopped' as const; // its owner stopped it already
  const stopped = record.current.stopped ?? [];
  const entry: StoppedVm = stopped.find((s) => sameVm(s, ref)) ?? {
    ...ref,
    runStrategy,
    ...(c.vmi.metadata.uid ? { vmi: c.vmi.metadata.uid } : {}),
  };
  if (!stopped.includes(entry)) {
    const next: KubevirtRecord = { ...record.current, stopped: [...stopped, entry] };
    await record.save(next); // before the change: restore must know to start it, and how
  }
  // and on the VM itself, before the stop: the Node (and its record) may be gone when it is restored
  const at = new Date(deps.now()).toISOString();
  if (
    (await api.markVm(namespace, c.vm, formatVmMark({ ...entry, node: deps.node, at }), signal)) === 'gone'
  ) {
    await forget(deps, ref, signal);
    return 'deleted' as const;
  }
  log.info(
    { vmi: c.key, vm: c.vm, runStrategy },
    'stopping the VirtualMachine (drainer.dev/maintenance: stop)',
  );
  try {
    await api.vmAction(namespace, c.vm, 'stop', signal);
    return undefined;
  } catch (err) {
    // 409 "VM is not running": its owner stopped it first; 404: its owner deleted it
    if (!isConflictError(err) && !isNotFoundError(err)) throw err;
    await forget(deps, ref, signal);
    return isNotFoundError(err) ? ('deleted' as const) : ('stopped' as const);
  }
}

/** Runs `step`; an error after the signal aborted (a cancel cut a request short) only ends it. */
async function unlessCancelled(signal: AbortSignal, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

/** Asks for each stop; the VMs whose owner took them out first are named with what the owner did. */
async function stopAll(
  vmis: readonly Classified[],
  deps: HaltDeps,
  owners: Map<string, OwnersDoing>,
  signal: AbortSignal,
) {
  const { api, node, log } = deps;
  const pods = await api.listVmPods(node, signal);
  for (const c of vmis) {
    if (signal.aborted) return;
    if (c.vm) {
      const doing = await stopVm({ ...c, vm: c.vm }, deps, signal);
      if (doing) {
        owners.set(c.key, doing);
        log.info(
          { vmi: c.key, vm: c.vm, doing },
          "its owner already took the VirtualMachine out: not drainer's to stop",
        );
      }
      continue;
    }
    const pod = activeLauncher(pods, c.vmi.metadata.uid);
    log.warn({ vmi: c.key }, 'stopping a VMI without a VirtualMachine (drainer.dev/maintenance: stop)');
    if (pod) await api.deletePod(pod.metadata.namespace ?? 'default', pod.metadata.name, signal);
  }
}

/** Waits until each VMI is no longer on the node; `left` keeps those still here. */
async function waitStopped(
  vmis: readonly Classified[],
  left: Set<string>,
  started: number,
  deps: HaltDeps,
  signal: AbortSignal,
) {
  const { api, node, now } = deps;
  while (left.size > 0 && !signal.aborted && now() - started < deps.timeoutMs) {
    await deps.sleep(deps.pollMs, signal);
    if (signal.aborted) return; // a cancel (an uncordon mid-stop): restore follows the stop to its end
    for (const c of vmis.filter((v) => left.has(v.key))) {
      const v = await api.getVmi(c.vmi.metadata.namespace ?? 'default', c.vmi.metadata.name, signal);
      if (stoppedHere(v, node)) left.delete(c.key);
    }
  }
}

/** A VirtualMachine its owner deleted while it stopped is the owner's: named, and not started on restore. */
async function deletedMeanwhile(
  vmis: readonly Classified[],
  deps: HaltDeps,
  owners: Map<string, OwnersDoing>,
  signal: AbortSignal,
) {
  for (const c of vmis) {
    if (!c.vm || owners.has(c.key) || signal.aborted) continue;
    const namespace = c.vmi.metadata.namespace ?? 'default';
    if (await deps.api.getVm(namespace, c.vm, signal)) continue;
    owners.set(c.key, 'deleted');
    await forget(deps, { namespace, name: c.vm }, signal);
  }
}

/** Stops each VMI, then waits until none runs on the node (or the deadline, or a cancel). */
export async function halt(
  vmis: readonly Classified[],
  deps: HaltDeps,
  signal: AbortSignal,
): Promise<WorkloadProgress[]> {
  const started = deps.now();
  const owners = new Map<string, OwnersDoing>();
  const left = new Set(vmis.map((c) => c.key));
  await unlessCancelled(signal, async () => {
    await stopAll(vmis, deps, owners, signal);
    await waitStopped(vmis, left, started, deps, signal);
    await deletedMeanwhile(
      vmis.filter((c) => !left.has(c.key)),
      deps,
      owners,
      signal,
    );
  });
  return stopProgress(vmis, left, started, deps, {
    failed: () => 'drainer.dev/maintenance: stop: did not stop in time',
    stopped: (c) => {
      const doing = owners.get(c.key);
      if (doing) return `${doing} by its owner (VirtualMachine ${c.vm ?? ''}); not started again on restore`;
      return c.vm
        ? `stopped (drainer.dev/maintenance: stop); VirtualMachine ${c.vm} is started again on restore`
        : 'stopped (drainer.dev/maintenance: stop); without a VirtualMachine it cannot be started again';
    },
  });
}
