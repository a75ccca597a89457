// The per-VMI migration deadline: never shorter than KubeVirt's own, so drainer never calls failed
// a migration KubeVirt still lets run (and leaves running). KubeVirt's virt-launcher aborts a
// migration after completionTimeoutPerGiB (150 s by default, KubeVirt CR
// spec.configuration.migrations) times its data size, and it measures both its own way
// (pkg/virt-launcher/virtwrap/manager.go, getVMIMigrationDataSize, and live-migration-source.go):
// - the size is the guest memory (spec.domain.memory.guest, else the memory request) plus, for a
//   block migration, the local disks it copies, plus the source PVCs of migrated volumes; it is
//   counted in decimal GB, rounded up, despite the setting's name;
// - the clock starts in the launcher when the copy starts, not when the migration leaves Pending.
// drainer's clock starts earlier (at Scheduling), so the margin covers the target's scheduling
// and start. A fixed kubevirt.migrationTimeout replaces the formula.
import type { KubevirtConfig } from '../../config/schema.ts';
import { parseQuantity } from './quantity.ts';
import type { Vmi } from './types.ts';

const GB = 1e9;
const GIB = 2 ** 30;
/** KubeVirt's default completionTimeoutPerGiB. */
export const KUBEVIRT_COMPLETION_TIMEOUT_PER_GIB = 150;
/** A guest whose memory nothing says is counted as this much. */
const UNKNOWN_MEMORY = 8 * GIB;

export interface Deadline {
  readonly ms: number;
  /** How it was reached, for the failure message. */
  readonly why: string;
}

const bytesOf = (q: string | number | undefined): number | undefined => {
  if (q === undefined) return undefined;
  const b = parseQuantity(q);
  return Number.isFinite(b) && b > 0 ? b : undefined;
};

/** The guest memory in bytes as KubeVirt counts it: the spec's guest size, else its request, else what it reports. */
export function guestMemoryBytes(vmi: Vmi): number | undefined {
  return (
    bytesOf(vmi.spec?.domain?.memory?.guest) ??
    bytesOf(vmi.spec?.domain?.resources?.requests?.memory) ??
    bytesOf(vmi.status?.memory?.guestCurrent)
  );
}

/** The disks a migration copies besides memory: migrated volumes' source PVCs, and local disks when it is a block migration. */
export function copiedDiskBytes(vmi: Vmi): number {
  const migrated = (vmi.status?.migratedVolumes ?? []).reduce(
    (n, v) => n + (bytesOf(v.sourcePVCInfo?.capacity?.storage) ?? 0),
    0,
  );
  if (vmi.status?.migrationMethod !== 'BlockMigration') return migrated;
  // the local (not PVC-backed) disks KubeVirt copies in a block migration, by the size it reports
  const local = (vmi.status.volumeStatus ?? [])
    .filter((v) => !v.persistentVolumeClaimInfo)
    .reduce((n, v) => n + (bytesOf(v.size) ?? 0), 0);
  return migrated + local;
}

/** The deadline of one VMI's running migration. */
export function migrationDeadline(
  vmi: Vmi,
  config: Pick<KubevirtConfig, 'migrationTimeout' | 'migrationTimeoutPerGiB' | 'migrationTimeoutMargin'>,
  clusterPerGiB: number | undefined,
): Deadline {
  if (config.migrationTimeout !== undefined)
    return { ms: config.migrationTimeout * 1000, why: 'kubevirt.migrationTimeout' };
  const perGiB = config.migrationTimeoutPerGiB ?? clusterPerGiB ?? KUBEVIRT_COMPLETION_TIMEOUT_PER_GIB;
  const memory = guestMemoryBytes(vmi);
  const disks = copiedDiskBytes(vmi);
  const gb = Math.max(1, Math.ceil(((memory ?? UNKNOWN_MEMORY) + disks) / GB));
  const secs = perGiB * gb + config.migrationTimeoutMargin;
  const what = `${memory === undefined ? 'memory unknown, 8 GiB' : 'memory'}${disks ? ' + copied disks' : ''}`;
  return {
    ms: secs * 1000,
    why: `${perGiB}s per GB × ${gb} GB (${what}, KubeVirt's count) + ${config.migrationTimeoutMargin}s margin`,
  };
}
