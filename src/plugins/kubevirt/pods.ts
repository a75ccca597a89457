// Which VMI a pod on the node belongs to: a virt-launcher pod names it in a label; a hotplug-disk
// pod is owned by the launcher pod it serves.
import type { PodLite } from './types.ts';

const CREATED_BY = 'kubevirt.io/created-by';

/** Pods of the VMIs whose uid is in `vmiUids` (launchers and their hotplug-disk pods). */
export function podsOfVmis(pods: readonly PodLite[], vmiUids: ReadonlySet<string>): PodLite[] {
  const vmiOfLauncher = new Map<string, string>();
  for (const p of pods) {
    const vmi = p.metadata.labels?.[CREATED_BY];
    if (p.metadata.uid && vmi) vmiOfLauncher.set(p.metadata.uid, vmi);
  }
  return pods.filter((p) => {
    const direct = p.metadata.labels?.[CREATED_BY];
    if (direct) return vmiUids.has(direct);
    return (p.metadata.ownerReferences ?? []).some(
      (o) => o.kind === 'Pod' && vmiUids.has(vmiOfLauncher.get(o.uid ?? '') ?? ''),
    );
  });
}

/** The launcher pod a VMI runs in now (not finished, not being deleted). */
export function activeLauncher<P extends PodLite>(
  pods: readonly P[],
  vmiUid: string | undefined,
): P | undefined {
  return pods.find(
    (p) =>
      p.metadata.labels?.['kubevirt.io'] === 'virt-launcher' &&
      p.metadata.labels[CREATED_BY] === vmiUid &&
      p.status?.phase !== 'Succeeded' &&
      p.status?.phase !== 'Failed' &&
      !p.metadata.deletionTimestamp,
  );
}

export const podRef = (p: PodLite) => ({
  namespace: p.metadata.namespace ?? 'default',
  name: p.metadata.name,
});

const MIGRATION_JOB = 'kubevirt.io/migrationJobUID';

/**
 * Migration target launchers on the node whose VMI is not among `here`: another node's VMI landing
 * on this one, its target pod scheduled before the node was tainted or cordoned.
 */
export function landingPods(pods: readonly PodLite[], here: ReadonlySet<string>): PodLite[] {
  return pods.filter(
    (p) =>
      p.metadata.labels?.['kubevirt.io'] === 'virt-launcher' &&
      p.metadata.labels[MIGRATION_JOB] !== undefined &&
      !here.has(p.metadata.labels[CREATED_BY] ?? '') &&
      p.status?.phase !== 'Succeeded' &&
      p.status?.phase !== 'Failed' &&
      !p.metadata.deletionTimestamp,
  );
}
