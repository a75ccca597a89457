// Restore of drainer.dev/maintenance: stop: each VirtualMachine drainer stopped is started again
// with the run strategy it had. KubeVirt takes time to stop a VM: its VMI stays Running through its
// termination grace period, and virt-api answers `start` with 409 "VM is already running" until the
// VMI is final (pkg/virt-api/rest/lifecycle.go). So a stop still under way is waited for, never read
// as "already running"; the record entry stays until the VM really runs again, and a restore cut
// short is tried again by the core with what the record still says. What its owner did meanwhile
// (deleted it, started it, changed its run strategy) is the owner's: drainer leaves it as it is.
import { isConflictError, isNotFoundError, TimeoutError } from '../../errors.ts';
import { forget, runStrategyOf } from './halt.ts';
import type { StoppedVm } from './record.ts';
import type { StopDeps } from './stopping.ts';
import type { RecordKeeper } from './triggers.ts';
import type { Vmi, VmLite } from './types.ts';
import { vmMarkOf, type VmStopMark } from './vm-mark.ts';

/** What a stop waits with (its timeout: how long one restore waits before the core retries), and the record. */
export interface RestartDeps extends Omit<StopDeps, 'node'> {
  readonly record: RecordKeeper;
}

type Step =
  | { readonly kind: 'start' }
  | { readonly kind: 'wait'; readonly why: string }
  | { readonly kind: 'running' }
  | { readonly kind: 'owners'; readonly why: string };

const final = (vmi: Vmi | undefined) => vmi?.status?.phase === 'Succeeded' || vmi?.status?.phase === 'Failed';

/** KubeVirt's stop turns Always and Once into Halted; Manual and RerunOnFailure keep theirs. */
const afterOurStop = (original: string | undefined) =>
  original === undefined || original === 'Always' || original === 'Once' ? 'Halted' : original;

/** Whether KubeVirt got drainer's stop: the strategy it sets, or the stop request it queues for the VMI. */
const stopReached = (ref: StoppedVm, vm: VmLite): boolean =>
  runStrategyOf(vm) === 'Halted' ||
  (vm.status?.stateChangeRequests ?? []).some((r) => r.action === 'Stop' && r.uid === ref.vmi);

/** A step that is not a start. */
type Settled = Exclude<Step, { kind: 'start' }>;

/** Where the VM stands, and what restore does next. */
function next(ref: StoppedVm, vm: VmLite | undefined, vmi: Vmi | undefined, asked: boolean): Step {
  if (!vm) return { kind: 'owners', why: 'deleted by its owner' };
  const ours = !!ref.vmi && vmi?.metadata.uid === ref.vmi;
  if (vmi && !ours && !final(vmi) && !vmi.metadata.deletionTimestamp)
    return asked ? { kind: 'running' } : { kind: 'owners', why: 'started again by its owner' };
  // a cancel between the record and the stop: KubeVirt never got it, nothing to undo
  if (vmi && ours && !final(vmi) && !vmi.metadata.deletionTimestamp && !stopReached(ref, vm))
    return { kind: 'running' };
  if (vmi && !final(vmi))
    return { kind: 'wait', why: 'its VMI is still stopping (termination grace period)' };
  if (asked) return { kind: 'wait', why: 'KubeVirt has not started its VMI yet' };
  if (vmi && ref.vmi && !ours) return { kind: 'owners', why: 'started and stopped again by its owner' };
  const strategy = runStrategyOf(vm);
  if (strategy !== afterOurStop(ref.runStrategy))
    return { kind: 'owners', why: `its owner set runStrategy ${strategy}` };
  return { kind: 'start' };
}

/** Starts it as it was: Once by its strategy (virt-api's start would make it Always), else by `start`. */
async function start(ref: StoppedVm, deps: RestartDeps, signal: AbortSignal): Promise<Settled | 'asked'> {
  const { api } = deps;
  if (ref.runStrategy === 'Once') {
    const set = await api.setRunStrategy(ref.namespace, ref.name, 'Halted', 'Once', signal);
    if (set === 'gone') return { kind: 'owners', why: 'deleted by its owner' };
    return set === 'changed' ? { kind: 'owners', why: 'its owner changed its runStrategy' } : 'asked';
  }
  try {
    await api.vmAction(ref.namespace, ref.name, 'start', signal);
  } catch (err) {
    if (isNotFoundError(err)) return { kind: 'owners', why: 'deleted by its owner' };
    // 409: a VMI that is not final yet (or the owner's); the next look says which
    if (!isConflictError(err)) throw err;
    return { kind: 'wait', why: 'KubeVirt answered 409 to start' };
  }
  return 'asked';
}

/** Starts one VM drainer stopped: 'running' again, or 'owners' (its owner acted on it since; left as it is). */
export async function restartOne(
  ref: StoppedVm,
  deps: RestartDeps,
  signal: AbortSignal,
): Promise<'running' | 'owners'> {
  const { api, log, now } = deps;
  const vm = `${ref.namespace}/${ref.name}`;
  const began = now();
  let asked = false;
  for (;;) {
    const [got, vmi] = await Promise.all([
      api.getVm(ref.namespace, ref.name, signal),
      api.getVmi(ref.namespace, ref.name, signal),
    ]);
    const seen = next(ref, got, vmi, asked);
    let step: Settled;
    if (seen.kind === 'start') {
      const answer = await start(ref, deps, signal);
      asked = answer === 'asked';
      step = answer === 'asked' ? { kind: 'wait', why: 'KubeVirt has not started its VMI yet' } : answer;
    } else step = seen;
    if (step.kind === 'running' || step.kind === 'owners') {
      if (step.kind === 'running')
        log.info({ vm, runStrategy: ref.runStrategy }, 'VirtualMachine running again');
      else log.info({ vm, why: step.why }, 'VirtualMachine left as its owner has it');
      await forget(deps, ref, signal);
      return step.kind;
    }
    if (now() - began > deps.timeoutMs)
      throw new TimeoutError(
        `VirtualMachine ${vm}: ${step.why} after ${Math.round((now() - began) / 1000)}s; restore tries again`,
      );
    await deps.sleep(deps.pollMs, signal);
    signal.throwIfAborted();
  }
}

/** Restore: starts the VirtualMachines drainer stopped, each kept in the record until it runs again. */
export async function restart(deps: RestartDeps, signal: AbortSignal): Promise<void> {
  for (const ref of [...(deps.record.current.stopped ?? [])]) await restartOne(ref, deps, signal);
}

/** The marked VMs this node's agent starts: its own maintenance's, and (`orphans`) those of Nodes that no longer exist. */
export async function markedFor(
  api: Pick<RestartDeps['api'], 'listMarkedVms' | 'listNodes'>,
  node: string,
  orphans: boolean,
  signal: AbortSignal,
): Promise<VmStopMark[]> {
  const marks = (await api.listMarkedVms(signal)).flatMap((vm) => vmMarkOf(vm) ?? []);
  if (!orphans || marks.every((m) => m.node === node)) return marks.filter((m) => m.node === node);
  const nodes = new Set((await api.listNodes(signal)).map((n) => n.metadata.name));
  return marks.filter((m) => m.node === node || !nodes.has(m.node));
}
