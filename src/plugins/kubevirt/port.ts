// What the KubeVirt plugin needs from the Kubernetes API, as a small port: the plugin's
// logic is tested against the sandbox through the real adapter (api.ts), and stays readable.
import type { NodeView, PodSpecView, Taint } from './views.ts';
import type { KubeVirtCr, PodLite, Vmi, Vmim, VmLite } from './types.ts';

export type { Taint };

/** Result of asking for a launcher pod's eviction. */
export type EvictionAnswer =
  | { kind: 'triggered' } // 429 "Eviction triggered evacuation" / "Evacuation in progress": KubeVirt migrates
  | { kind: 'evicted' } // 201: the pod is going away (the VMI stops)
  | { kind: 'gone' } // 404
  | { kind: 'refused'; message: string }; // another 429 (e.g. a PDB or a VMI that cannot migrate)

/** Result of creating a migration: KubeVirt's admission refuses a second open one, or a VMI that cannot move. */
export type CreateAnswer = { kind: 'created'; name: string } | { kind: 'refused'; message: string };

export interface KubevirtApi {
  /** Every KubeVirt CR, or undefined when the kubevirts CRD is not installed. */
  listKubeVirts(signal: AbortSignal): Promise<KubeVirtCr[] | undefined>;
  /** VMIs whose label kubevirt.io/nodeName is the node. */
  listVmis(node: string, signal: AbortSignal): Promise<Vmi[]>;
  getVmi(namespace: string, name: string, signal: AbortSignal): Promise<Vmi | undefined>;
  listMigrations(signal: AbortSignal): Promise<Vmim[]>;
  deleteMigration(namespace: string, name: string, signal: AbortSignal): Promise<void>;
  /** The node's virt-launcher and hotplug-disk pods (label kubevirt.io). */
  listVmPods(node: string, signal: AbortSignal): Promise<PodLite[]>;
  nodeTaints(node: string, signal: AbortSignal): Promise<Taint[]>;
  addTaint(node: string, taint: Taint, signal: AbortSignal): Promise<void>;
  removeTaint(node: string, key: string, effect: string, signal: AbortSignal): Promise<void>;
  evictPod(namespace: string, name: string, signal: AbortSignal): Promise<EvictionAnswer>;
  deletePod(namespace: string, name: string, signal: AbortSignal): Promise<void>;
  /** A VirtualMachine, or undefined when it (or the CRD) does not exist. */
  getVm(namespace: string, name: string, signal: AbortSignal): Promise<VmLite | undefined>;
  /** Every VirtualMachine carrying drainer's stop mark (label drainer.dev/stopped), in all namespaces. */
  listMarkedVms(signal: AbortSignal): Promise<VmLite[]>;
  /** Sets drainer's stop mark on a VirtualMachine (`mark`), or takes it off (null); 'gone' without a VM. */
  markVm(namespace: string, name: string, mark: string | null, signal: AbortSignal): Promise<'done' | 'gone'>;
  /** PUT subresources.kubevirt.io …/virtualmachines/{name}/stop or /start. */
  vmAction(namespace: string, name: string, action: 'stop' | 'start', signal: AbortSignal): Promise<void>;
  /**
   * Sets a VirtualMachine's spec.runStrategy from `from` to `to` (a JSON patch that tests `from`
   * first): 'changed' when the VM no longer has `from` (its owner changed it), 'gone' without a VM.
   */
  setRunStrategy(
    namespace: string,
    name: string,
    from: string,
    to: string,
    signal: AbortSignal,
  ): Promise<'set' | 'changed' | 'gone'>;
  /** Whether KubeVirt serves evacuate/cancel (v1.7+), by discovery of subresources.kubevirt.io/v1. */
  canCancelEvacuation(signal: AbortSignal): Promise<boolean>;
  /** Takes a VMI's eviction mark back (PUT …/evacuate/cancel); KubeVirt refuses it while the drain taint is on. */
  cancelEvacuation(namespace: string, name: string, node: string, signal: AbortSignal): Promise<void>;
  /** Creates a VirtualMachineInstanceMigration (drainer as the controller of External VMIs). */
  createMigration(namespace: string, vmi: string, node: string, signal: AbortSignal): Promise<CreateAnswer>;
  /** For the capacity check: every Node, and every pod not finished (both read-only). */
  listNodes(signal: AbortSignal): Promise<NodeView[]>;
  listActivePods(signal: AbortSignal): Promise<PodSpecView[]>;
}
