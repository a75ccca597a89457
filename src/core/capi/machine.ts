// Cluster API's pre-drain hook, held by drainer (cluster-api.sigs.k8s.io "Machine deletion process"):
// the Machine controller does not start draining a deleted Machine's node while any annotation with
// the prefix pre-drain.delete.hook.machine.cluster.x-k8s.io is on the Machine; the hook's owner
// removes its own once its work is done. drainer keeps its hook on the Machine whose status.nodeRef
// is its node, starts a maintenance when that Machine is deleted, and takes the hook off once the
// node is Evacuated (so Cluster API drains a node with no VMs). On Failed the hook stays.
// Pure: the decision of one look at the Machine and the Node, tested without a cluster.
import type { NodeObject } from '../cluster/objects.ts';
import { parseRecord, STATE_ANNOTATION } from '../record/record.ts';

export const MACHINE_API_VERSION = 'cluster.x-k8s.io/v1beta1';
export const PRE_DRAIN_HOOK_PREFIX = 'pre-drain.delete.hook.machine.cluster.x-k8s.io';
/** drainer's hook; its value names the owner, as the contract asks. */
export const PRE_DRAIN_HOOK = `${PRE_DRAIN_HOOK_PREFIX}/drainer`;
export const PRE_DRAIN_HOOK_OWNER = 'drainer';
/**
 * Set on the Node (by its agent) while the node's Machine is being deleted: `<namespace>/<name>`.
 * The Node is where every trigger is read (desired.ts), so a restarted agent resumes at once.
 */
export const MACHINE_DELETING_ANNOTATION = 'drainer.dev/machine-deleting';

export interface MachineObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly deletionTimestamp?: string;
    readonly ownerReferences?: readonly { kind?: string; name?: string }[];
  };
  readonly spec?: { readonly nodeDrainTimeout?: string; readonly clusterName?: string };
  readonly status?: { readonly nodeRef?: { readonly name?: string } };
}

export const machineKey = (m: MachineObject): string =>
  `${m.metadata?.namespace ?? ''}/${m.metadata?.name ?? ''}`;

export const hasHook = (m: MachineObject): boolean => m.metadata?.annotations?.[PRE_DRAIN_HOOK] !== undefined;

/** The Machine whose status.nodeRef names the node (the oldest by key, should two claim it). */
export function machineOfNode(machines: Iterable<MachineObject>, node: string): MachineObject | undefined {
  return [...machines]
    .filter((m) => m.status?.nodeRef?.name === node)
    .sort((a, b) => machineKey(a).localeCompare(machineKey(b)))[0];
}

/** What the agent does about its node's Machine, at one look. */
export type HookStep =
  | { readonly kind: 'none' }
  /** Put drainer's hook on the Machine (not deleted yet). */
  | { readonly kind: 'add' }
  /** Take drainer's hook off (the node is Evacuated, or the hook is turned off). */
  | { readonly kind: 'remove'; readonly why: string }
  /** Mark the Node (value) or unmark it (null): the maintenance its Machine's deletion starts. */
  | { readonly kind: 'mark'; readonly value: string | null }
  /** The evacuation failed while the Machine waits: the hook stays, and the operator is told. */
  | { readonly kind: 'failed'; readonly message: string };

export interface HookLook {
  readonly enabled: boolean;
  readonly node: NodeObject | undefined;
  /** undefined: no Machine names the node (after the Machine watch listed once). */
  readonly machine: MachineObject | undefined;
}

/** One step at a time; the caller looks again after each write (its watches bring the change). */
export function hookStep({ enabled, node, machine }: HookLook): HookStep {
  if (!node) return none;
  const marked = node.metadata?.annotations?.[MACHINE_DELETING_ANNOTATION];
  const deleting = machine?.metadata?.deletionTimestamp !== undefined;
  if (!enabled || !machine || !deleting) {
    // no Machine deletion to hold (any more): a mark left from one would keep the node evacuated
    if (marked !== undefined) return { kind: 'mark', value: null };
    if (!machine) return none;
    if (enabled && !deleting && !hasHook(machine)) return { kind: 'add' };
    if (!enabled && hasHook(machine)) return { kind: 'remove', why: 'clusterAPI.preDrainHook is off' };
    return none;
  }
  const key = machineKey(machine);
  if (marked !== key) return { kind: 'mark', value: key };
  if (!hasHook(machine)) return none;
  const phase = parseRecord(node.metadata?.annotations?.[STATE_ANNOTATION])?.phase;
  if (phase === 'Evacuated') return { kind: 'remove', why: 'the node is Evacuated' };
  if (phase === 'Failed') return { kind: 'failed', message: heldText(machine, node.metadata?.name ?? '') };
  return none;
}

/** What an operator reads when a deleted Machine waits on drainer's hook and nothing will take it off. */
export const heldText = (m: MachineObject, node: string): string =>
  `Machine ${machineKey(m)} (node ${node}) is deleted and waits on drainer's pre-drain hook, which stays while VMs may be on the node: fix the cause and run the evacuation again, or let Cluster API drain and delete it as it is: ${unhookCommand(m)}`;

/** The one command that takes drainer's hook off a Machine. */
export const unhookCommand = (m: MachineObject): string =>
  `kubectl annotate machines.cluster.x-k8s.io -n ${m.metadata?.namespace ?? 'default'} ${m.metadata?.name ?? ''} ${PRE_DRAIN_HOOK}-`;

const none: HookStep = { kind: 'none' };
