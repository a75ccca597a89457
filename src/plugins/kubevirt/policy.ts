// The per-VM way out (issue 31): the annotation drainer.dev/maintenance on a VMI, else on the
// VirtualMachine that owns it. The same values as for Nova servers, where they apply to KubeVirt:
// live (the default), stop (stopped on the host and started again on restore), notify (its owner
// is asked to move it; after kubevirt.notifyTimeout the node's default applies).
import type { Vmi, VmLite } from './types.ts';

export const MAINTENANCE_ANNOTATION = 'drainer.dev/maintenance';
export const MAINTENANCE_VALUES = ['live', 'stop', 'notify'] as const;
export type Maintenance = (typeof MAINTENANCE_VALUES)[number];

export type PolicyRead =
  | { readonly policy: Maintenance; readonly from: 'default' | 'VirtualMachineInstance' | 'VirtualMachine' }
  | { readonly invalid: string; readonly from: 'VirtualMachineInstance' | 'VirtualMachine' };

/** The VirtualMachine that owns the VMI, when one does. */
export const ownerVm = (vmi: Vmi): string | undefined =>
  vmi.metadata.ownerReferences?.find((o) => o.kind === 'VirtualMachine')?.name;

export function readPolicy(vmi: Vmi, vm: VmLite | undefined): PolicyRead {
  const own = vmi.metadata.annotations?.[MAINTENANCE_ANNOTATION];
  const theirs = vm?.metadata.annotations?.[MAINTENANCE_ANNOTATION];
  const value = own ?? theirs;
  const from = own !== undefined ? 'VirtualMachineInstance' : 'VirtualMachine';
  if (value === undefined) return { policy: 'live', from: 'default' };
  return (MAINTENANCE_VALUES as readonly string[]).includes(value)
    ? { policy: value as Maintenance, from }
    : { invalid: value, from };
}

/** One line for an invalid value: the key, the object and what is allowed. */
export const invalidPolicy = (read: { invalid: string; from: string }, name: string): string =>
  `${read.from} ${name}: ${MAINTENANCE_ANNOTATION}="${read.invalid}" is not one of ${MAINTENANCE_VALUES.join(', ')}`;
