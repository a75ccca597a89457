// The per-VMI deadline follows the guest: KubeVirt's completionTimeoutPerGiB (150 s unless the
// KubeVirt CR or kubevirt.migrationTimeoutPerGiB says otherwise) per GiB of guest memory, plus a
// margin; a fixed kubevirt.migrationTimeout replaces the formula.
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
  it('is 150 s per GiB of guest memory plus the 600 s margin by default (a 16 GiB guest: 3000 s)', () => {
    expect(migrationDeadline(withMemory('16Gi'), config(), undefined)).toEqual({
      ms: 3_000_000,
      why: '150s per GiB × 16 GiB + 600s margin',
    });
  });

  it("uses the KubeVirt CR's completionTimeoutPerGiB, unless kubevirt.migrationTimeoutPerGiB is set", () => {
    expect(migrationDeadline(withMemory('4Gi'), config(), 300).ms).toBe((300 * 4 + 600) * 1000);
    expect(migrationDeadline(withMemory('4Gi'), config({ migrationTimeoutPerGiB: 100 }), 300).ms).toBe(
      (100 * 4 + 600) * 1000,
    );
  });

  it('counts at least one GiB, and 8 GiB when the memory is unknown', () => {
    expect(migrationDeadline(withMemory('512Mi'), config(), undefined).ms).toBe((150 + 600) * 1000);
    expect(migrationDeadline(withMemory(undefined), config(), undefined)).toEqual({
      ms: (150 * 8 + 600) * 1000,
      why: '150s per GiB × memory unknown, 8 GiB + 600s margin',
    });
  });

  it('prefers the size KubeVirt reports (status.memory.guestCurrent) over the request', () => {
    expect(guestMemoryBytes(withMemory('2Gi', '3Gi'))).toBe(3 * 2 ** 30);
  });

  it('is the fixed kubevirt.migrationTimeout when set', () => {
    expect(migrationDeadline(withMemory('16Gi'), config({ migrationTimeout: '30m' }), 300)).toEqual({
      ms: 1_800_000,
      why: 'kubevirt.migrationTimeout',
    });
  });
});
