// drainer doctor's list of VirtualMachines drainer stopped and marked (label and annotation
// drainer.dev/stopped, plugins/kubevirt/vm-mark.ts) that no agent will start. A halted VM runs on no
// node: the agent of the node the mark names starts it once that node is in service (its restore,
// or its stranded check when its Node is registered again). When that node's agent is gone, or the
// Node is gone for good (only an agent's stranded check at its start takes over such a VM), it stays
// Halted. An operator finding, with the one command that starts it and takes the mark off.
import { agentAlive } from '../agents.ts';
import { violation, type Violation } from '../violation.ts';
import type { CheckOptions, World, WorldVm } from '../world.ts';

/** The label and annotation of drainer's stop mark on a VirtualMachine. */
export const VM_STOP_MARK = 'drainer.dev/stopped';

/** The mark's fields the check reads (the annotation is JSON). */
function markOf(vm: WorldVm): { node: string; runStrategy?: string; at?: string } | undefined {
  try {
    const v = JSON.parse(vm.mark) as { node?: unknown; runStrategy?: unknown; at?: unknown };
    if (typeof v.node !== 'string') return undefined;
    return {
      node: v.node,
      ...(typeof v.runStrategy === 'string' ? { runStrategy: v.runStrategy } : {}),
      ...(typeof v.at === 'string' ? { at: v.at } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Starts it as drainer would (Once by its strategy: virt-api's start makes it Always), then unmarks it. */
function fixFor(vm: WorldVm, runStrategy: string | undefined): string {
  const at = `${vm.name} -n ${vm.namespace}`;
  const start =
    runStrategy === 'Once'
      ? `kubectl patch vm ${at} --type merge -p '{"spec":{"runStrategy":"Once"}}'`
      : `virtctl start ${at}`;
  return `${start} && kubectl label vm ${at} ${VM_STOP_MARK}- && kubectl annotate vm ${at} ${VM_STOP_MARK}-`;
}

export function vmStopMarksWithoutAgent(world: World, opts: CheckOptions): Violation[] {
  if (!world.leases) return []; // the agents were not read: nothing to say about them
  return (world.vms ?? []).flatMap((vm) => {
    const mark = markOf(vm);
    if (!mark || vm.running) return [];
    const known = world.nodes.some((n) => n.name === mark.node);
    if (known && agentAlive(world, mark.node, opts)) return [];
    const where = known
      ? `its node ${mark.node} has no agent running (no live Lease)`
      : `its node ${mark.node} is no node of this cluster any more (only an agent's stranded check at its start would take it over)`;
    return [
      violation(
        'vm-stop-mark-without-agent',
        `virtualmachine/${vm.namespace}/${vm.name}`,
        `VirtualMachine ${vm.namespace}/${vm.name} carries drainer's stop mark (stopped for node ${mark.node}${
          mark.at ? ` at ${mark.at}` : ''
        }) and does not run; ${where}: no agent will start it`,
        fixFor(vm, mark.runStrategy),
      ),
    ];
  });
}
