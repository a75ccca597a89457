// The per-VMI deadline follows the guest as KubeVirt counts it (virt-launcher's
// getVMIMigrationDataSize): completionTimeoutPerGiB (150 s unless the KubeVirt CR or
// kubevirt.migrationTimeoutPerGiB says otherwise) per decimal GB, rounded up, of guest memory and the
// disks a block migration copies, plus a margin; a fixed kubevirt.migrationTimeout replaces it.
import { describe, expect, it } from 'vitest';
import { kubevirtSchema } from '../../../src/config/schema.ts';
import { guestMemoryBytes, migrationDeadline } from '../../../src/plugins/kubevirt/timeout.ts';
import type { Vmi } from '../../../src/plugins/kubevirt/types.ts';

const config = (more = {}) => kubevirtSchema.parse(more);
const withMemory = (spec: string | undefined, status?: string): Vmi => ({
  metadata: { name: 'vm', namespace: 'vms' },
  ...(spec ? { spec: { domain: { resources: { requests: { memory: spec } } } } } : {}),
  ...(status ? { status: { memory: { guestCurrent: status } } } : {}),
});

describe('the migration deadline of a VMI', () => {
  it('counts decimal GB, rounded up, as KubeVirt does: a 16 GiB guest is 18 GB, 150 s each plus the 600 s margin', () => {
    expect(migrationDeadline(withMemory('16Gi'), config(), undefined)).toEqual({
      ms: (150 * 18 + 600) * 1000,
      why: "150s per GB × 18 GB (memory, KubeVirt's count) + 600s margin",
    });
  });

  it("is never shorter than KubeVirt's own for big guests: 64 GiB is 69 GB, 10350 s before KubeVirt aborts", () => {
    const kubevirtAborts = 150 * 69; // completionTimeoutPerGiB × getVMIMigrationDataSize in GB
    expect(migrationDeadline(withMemory('64Gi'), config(), undefined).ms).toBeGreaterThan(
      kubevirtAborts * 1000,
    );
    expect(migrationDeadline(withMemory('256Gi'), config(), undefined).ms).toBeGreaterThan(150 * 275 * 1000);
  });

  it('adds the disks a block migration copies and the source PVCs of migrated volumes', () => {
    const vmi: Vmi = {
      ...withMemory('4Gi'),
      status: {
        migrationMethod: 'BlockMigration',
        volumeStatus: [
          { name: 'rootdisk', size: 20e9 },
          { name: 'data', size: 100e9, persistentVolumeClaimInfo: {} }, // shared storage: not copied
        ],
        migratedVolumes: [{ sourcePVCInfo: { capacity: { storage: '10G' } } }],
      },
    };
    // 4Gi = 4.29 GB, + 20 GB local + 10 GB migrated = 34.29 GB → 35 GB
    expect(migrationDeadline(vmi, config(), undefined)).toEqual({
      ms: (150 * 35 + 600) * 1000,
      why: "150s per GB × 35 GB (memory + copied disks, KubeVirt's count) + 600s margin",
    });
  });

  it("uses the KubeVirt CR's completionTimeoutPerGiB, unless kubevirt.migrationTimeoutPerGiB is set", () => {
    expect(migrationDeadline(withMemory('4G'), config(), 300).ms).toBe((300 * 4 + 600) * 1000);
    expect(migrationDeadline(withMemory('4G'), config({ migrationTimeoutPerGiB: 100 }), 300).ms).toBe(
      (100 * 4 + 600) * 1000,
    );
  });

  it('counts at least one GB, and 8 GiB when the memory is unknown', () => {
    expect(migrationDeadline(withMemory('512Mi'), config(), undefined).ms).toBe((150 + 600) * 1000);
    expect(migrationDeadline(withMemory(undefined), config(), undefined)).toEqual({
      ms: (150 * 9 + 600) * 1000,
      why: "150s per GB × 9 GB (memory unknown, 8 GiB, KubeVirt's count) + 600s margin",
    });
  });

  it("counts the spec's memory as KubeVirt does, the size it reports only without one", () => {
    expect(guestMemoryBytes(withMemory('2Gi', '3Gi'))).toBe(2 * 2 ** 30);
    expect(guestMemoryBytes(withMemory(undefined, '3Gi'))).toBe(3 * 2 ** 30);
  });

  it('is the fixed kubevirt.migrationTimeout when set', () => {
    expect(migrationDeadline(withMemory('16Gi'), config({ migrationTimeout: '30m' }), 300)).toEqual({
      ms: 1_800_000,
      why: 'kubevirt.migrationTimeout',
    });
  });
});
