// What is on a host (issue 52 item 2): the one definition of which Nova server states and which
// KubeVirt VMI phases put a VM on its host, running or stopped. Every count of VMs (plan, release,
// status, the gate's keeperless drop, the drainer_node_vms metric) goes through the plugins' plans
// and progress, which carry this presence; src/core/backends/vm-count.ts counts it.
import type { Presence } from '../core/backends/plugin.ts';

/** On the host and running (absent), on it but stopped, or not on it at all. */
export type HostPresence = Presence | 'running';

/**
 * Nova: a stopped guest (SHUTOFF, SHELVED: Nova keeps it on the host until it is offloaded,
 * SUSPENDED: its memory saved on the host) is still there, with its disk and its place; SHELVED_OFFLOADED
 * has no host, DELETED and SOFT_DELETED (reclaimed later) are its owner's deletion. Everything
 * else, ERROR and the busy states included, counts as running: nobody can say its guest is off.
 */
const NOVA: Readonly<Record<string, HostPresence>> = {
  SHUTOFF: 'stopped',
  SHELVED: 'stopped',
  SUSPENDED: 'stopped',
  SHELVED_OFFLOADED: 'gone',
  DELETED: 'gone',
  SOFT_DELETED: 'gone',
};

export const novaPresence = (status: string): HostPresence => NOVA[status] ?? 'running';

/**
 * KubeVirt: a VMI on its node runs (Scheduled, Running, Unknown: the node stopped reporting, the
 * guest may well run); Pending and Scheduling have no node yet, Succeeded and Failed are over. A
 * stopped VirtualMachine has no VMI at all, so no VMI is on a node stopped.
 */
const VMI: Readonly<Record<string, HostPresence>> = {
  Pending: 'gone',
  Scheduling: 'gone',
  Succeeded: 'gone',
  Failed: 'gone',
};

export const vmiPresence = (phase: string | undefined): HostPresence => VMI[phase ?? 'Unknown'] ?? 'running';

/** The contract's field: absent for a running VM. */
export const presenceField = (p: HostPresence): { presence?: Presence } =>
  p === 'running' ? {} : { presence: p };
