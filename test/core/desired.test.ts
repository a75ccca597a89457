import { describe, expect, it } from 'vitest';
import { desiredState, viewMaintenances } from '../../src/core/agent/desired.ts';
import type { MaintenanceObject, NodeObject } from '../../src/core/cluster/objects.ts';
import { newRecord } from '../../src/core/record/record.ts';

const node = (unschedulable = false): NodeObject => ({ metadata: { name: 'n1' }, spec: { unschedulable } });
const nm = (
  name: string,
  nodeName: string,
  extra: Partial<MaintenanceObject['metadata']> = {},
): MaintenanceObject => ({
  apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
  metadata: { name, creationTimestamp: '2024-01-01T00:00:00Z', ...extra },
  spec: { nodeName },
});

describe('desired state', () => {
  it('is InService for a schedulable node without NodeMaintenance', () => {
    expect(
      desiredState({ nodeName: 'n1', node: node(), maintenances: [], record: undefined, mode: 'own' }),
    ).toEqual({
      state: 'InService',
    });
  });

  it('is Evacuated by a cordon', () => {
    expect(
      desiredState({ nodeName: 'n1', node: node(true), maintenances: [], record: undefined, mode: 'off' }),
    ).toEqual({
      state: 'Evacuated',
      trigger: 'cordon',
    });
  });

  it('does not count a cordon drainer made itself', () => {
    const record = { ...newRecord('NodeMaintenance/x', new Date()), cordonedByUs: true };
    expect(
      desiredState({ nodeName: 'n1', node: node(true), maintenances: [], record, mode: 'own' }).state,
    ).toBe('InService');
  });

  it('is Evacuated by a NodeMaintenance naming the node in mode own only', () => {
    const maintenances = [nm('m', 'n1'), nm('other', 'n2')];
    expect(
      desiredState({ nodeName: 'n1', node: node(), maintenances, record: undefined, mode: 'own' }),
    ).toMatchObject({
      state: 'Evacuated',
      trigger: 'NodeMaintenance/m',
    });
    expect(
      desiredState({ nodeName: 'n1', node: node(), maintenances, record: undefined, mode: 'observe' }).state,
    ).toBe('InService');
  });

  it('ignores a NodeMaintenance being deleted', () => {
    const maintenances = [nm('m', 'n1', { deletionTimestamp: '2024-01-02T00:00:00Z' })];
    expect(
      desiredState({ nodeName: 'n1', node: node(), maintenances, record: undefined, mode: 'own' }).state,
    ).toBe('InService');
  });
});

describe('NodeMaintenance view', () => {
  it('lets the oldest win and lists the others as duplicates', () => {
    const view = viewMaintenances('n1', [
      nm('b', 'n1', { creationTimestamp: '2024-01-03T00:00:00Z' }),
      nm('a', 'n1', { creationTimestamp: '2024-01-02T00:00:00Z' }),
    ]);
    expect(view.active?.metadata?.name).toBe('a');
    expect(view.duplicates.map((d) => d.metadata?.name)).toEqual(['b']);
  });

  it('sees a changed nodeName from the node drainer recorded on the CR', () => {
    const moved = nm('m', 'n2', { annotations: { 'drainer.dev/node': 'n1' } });
    expect(viewMaintenances('n1', [moved]).changed).toHaveLength(1);
    expect(viewMaintenances('n2', [moved]).active).toBeUndefined();
  });

  describe('triggers.taints', () => {
    const DEFAULT = ['karpenter.sh/disrupted', 'ToBeDeletedByClusterAutoscaler'];
    const tainted = (...keys: string[]): NodeObject => ({
      metadata: { name: 'n1' },
      spec: { taints: keys.map((key) => ({ key, effect: 'NoSchedule' })) },
    });
    const desired = (n: NodeObject, taints = DEFAULT) =>
      desiredState({ nodeName: 'n1', node: n, maintenances: [], record: undefined, mode: 'own', taints });

    it("Karpenter's disruption taint evacuates an uncordoned node, naming the taint as trigger", () => {
      expect(desired(tainted('karpenter.sh/disrupted'))).toEqual({
        state: 'Evacuated',
        trigger: 'taint/karpenter.sh/disrupted',
      });
      expect(desired(tainted('ToBeDeletedByClusterAutoscaler'))).toMatchObject({
        trigger: 'taint/ToBeDeletedByClusterAutoscaler',
      });
    });

    it('the taint gone (and no cordon): back in service', () => {
      expect(desired(tainted('other.example/x')).state).toBe('InService');
    });

    it("drainer's own taint and KubeVirt's drain taint never count, even when listed", () => {
      const all = [...DEFAULT, 'drainer.dev/evacuating', 'kubevirt.io/drain'];
      expect(desired(tainted('drainer.dev/evacuating', 'kubevirt.io/drain'), all).state).toBe('InService');
    });

    it('a cordon by someone else stays the trigger when both are there', () => {
      const t = tainted('karpenter.sh/disrupted');
      const n: NodeObject = { ...t, spec: { ...t.spec, unschedulable: true } };
      expect(desired(n)).toMatchObject({ trigger: 'cordon' });
    });
  });
});
