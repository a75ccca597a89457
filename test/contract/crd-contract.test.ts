// The check the real suite runs against a cluster's KubeVirt CRDs (crd-contract.ts), held to a schema made from
// the excerpt itself: identical, nothing is named; a field removed, typed otherwise or only kept as unknown is
// named with its kind and path.
import { describe, expect, it } from 'vitest';
import { compare, fieldCount, loadExcerpt, verdict } from './crd-contract.ts';

const excerpt = loadExcerpt();

/** The excerpt's kinds as a served CRD schema would be: every $ref written out in place. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function served(): Record<string, any> {
  const inline = (s: unknown): unknown => {
    if (Array.isArray(s)) return s.map(inline);
    if (!s || typeof s !== 'object') return s;
    const o = s as Record<string, unknown>;
    if (typeof o.$ref === 'string') return inline(excerpt[o.$ref.replace(/^#\//, '')]);
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, inline(v)]));
  };
  return {
    VirtualMachineInstance: inline(excerpt.VirtualMachineInstance),
    VirtualMachineInstanceMigration: inline(excerpt.VirtualMachineInstanceMigration),
  };
}

describe('the CRD contract check', () => {
  it('names nothing when the served schema has every field of the excerpt', () => {
    expect(compare(excerpt, served())).toEqual([]);
    expect(verdict(excerpt, [])).toBe(
      `all ${fieldCount(excerpt)} fields of test/contract/kubevirt-crds.json are in the real CRDs`,
    );
  });

  it('names a field that is missing, typed otherwise, or only kept as an unknown field', () => {
    const real = served();
    const vmiStatus = real.VirtualMachineInstance.properties.status;
    delete vmiStatus.properties.evacuationNodeName;
    real.VirtualMachineInstanceMigration.properties.status.properties.migrationState.properties.failureReason =
      {
        type: 'integer',
      };
    vmiStatus.properties.memory = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

    const findings = compare(excerpt, real);

    expect(findings).toEqual([
      { kind: 'VirtualMachineInstance', path: 'status.evacuationNodeName', problem: 'missing' },
      { kind: 'VirtualMachineInstance', path: 'status.memory.guestAtBoot', problem: 'untyped' },
      { kind: 'VirtualMachineInstance', path: 'status.memory.guestCurrent', problem: 'untyped' },
      { kind: 'VirtualMachineInstance', path: 'status.memory.guestRequested', problem: 'untyped' },
      { kind: 'VirtualMachineInstance', path: 'status.memory.memoryOverhead', problem: 'untyped' },
      {
        kind: 'VirtualMachineInstanceMigration',
        path: 'status.migrationState.failureReason',
        problem: 'type',
        detail: 'integer, excerpt string',
      },
    ]);
    expect(verdict(excerpt, findings)).toMatch(/^6 of \d+ fields differ \(2 missing or typed otherwise\)/);
  });

  it('names the kind whose CRD is not served at all', () => {
    const real = served();
    delete real.VirtualMachineInstanceMigration;
    expect(compare(excerpt, real)).toEqual([
      {
        kind: 'VirtualMachineInstanceMigration',
        path: 'apiVersion',
        problem: 'missing',
        detail: 'no CRD virtualmachineinstancemigrations.kubevirt.io',
      },
    ]);
  });
});
