// drainer's mark on a VirtualMachine it stops (drainer.dev/maintenance: stop): set BEFORE the stop,
// so that the memory of the stop lives on the VM itself and not only in the Node's record (Karpenter,
// Cluster API or `kubectl delete node` take the record along with the Node). The label lets any agent
// find the marked VMs with one list; the annotation says which maintenance stopped it, when, and how
// to give it back (its run strategy, and the VMI drainer stopped, which tells drainer's stop from an
// owner's). Who starts it: a halted VM runs on no node, so the agent of the node the mark names does
// (its restore, or its stranded check once its Node is registered again with no record); when that
// Node no longer exists, the stranded check of any agent whose node is in service does. The mark
// goes once the VM runs again, or once its owner acted on it (deleted, started, run strategy changed).
import type { StoppedVm } from './record.ts';
import type { VmLite } from './types.ts';

export const STOP_MARK_LABEL = 'drainer.dev/stopped';
export const STOP_MARK_ANNOTATION = 'drainer.dev/stopped';

export interface VmStopMark extends StoppedVm {
  /** The node whose maintenance stopped it. */
  readonly node: string;
  /** When (ISO). */
  readonly at: string;
}

const str = (v: unknown): v is string => typeof v === 'string';

/** The annotation's value: what restore needs, and who stopped it when. */
export const formatVmMark = (m: VmStopMark): string =>
  JSON.stringify({
    node: m.node,
    at: m.at,
    ...(m.runStrategy ? { runStrategy: m.runStrategy } : {}),
    ...(m.vmi ? { vmi: m.vmi } : {}),
  });

/** The mark on a VM, or undefined when it carries none (or one that does not read). */
export function vmMarkOf(vm: VmLite): VmStopMark | undefined {
  const text = vm.metadata.annotations?.[STOP_MARK_ANNOTATION];
  if (!text) return undefined;
  let v: Partial<Record<'node' | 'at' | 'runStrategy' | 'vmi', unknown>>;
  try {
    v = JSON.parse(text) as typeof v;
  } catch {
    return undefined;
  }
  if (!v || !str(v.node)) return undefined;
  return {
    namespace: vm.metadata.namespace ?? 'default',
    name: vm.metadata.name,
    node: v.node,
    at: str(v.at) ? v.at : '',
    ...(str(v.runStrategy) ? { runStrategy: v.runStrategy } : {}),
    ...(str(v.vmi) ? { vmi: v.vmi } : {}),
  };
}
