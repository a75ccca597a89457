// Objects are known by their uid, not their name (issue 48): a VMI deleted and created again under
// its old name (its owner restarted the VirtualMachine, Cluster API's KubeVirt provider deleted it
// and the VM made a new one) is another object. The one drainer followed is gone: when the new one
// is not on the node, the node lost the workload (not a failure); when it is, it is a new workload
// to evacuate, and none of the old one's migrations are its own.
import type { Vmi, Vmim } from './types.ts';

export type Replacement =
  { readonly kind: 'left'; readonly message: string } | { readonly kind: 'new'; readonly message: string };

/** What a VMI read under the followed one's name says, when it is another object (else undefined). */
export function replacement(
  followed: string | undefined,
  vmi: Vmi | undefined,
  node: string,
): Replacement | undefined {
  const uid = vmi?.metadata.uid;
  if (!vmi || !followed || !uid || uid === followed) return undefined;
  const where = vmi.status?.nodeName;
  if (where === node)
    return {
      kind: 'new',
      message: `created again under its name on node ${node} (uid ${uid}): a new workload to move`,
    };
  return {
    kind: 'left',
    message: `deleted and created again under its name (uid ${uid}) ${
      where ? `on node ${where}` : 'not scheduled yet'
    }: it left the node by its owner's doing`,
  };
}

/** The migrations of this VMI: those created before it were of an earlier VMI of the same name. */
export function migrationsOf(vmi: Vmi | undefined, migrations: readonly Vmim[]): Vmim[] {
  const born = vmi?.metadata.creationTimestamp;
  if (!born) return [...migrations];
  return migrations.filter((m) => (m.metadata.creationTimestamp ?? born) >= born);
}
