import { describe, expect, it } from 'vitest';
import { classify, effectiveStrategy, migratedAway } from '../../../src/plugins/kubevirt/classify.ts';
import { clusterSettings } from '../../../src/plugins/kubevirt/settings.ts';
import type { Vmi } from '../../../src/plugins/kubevirt/types.ts';

const vmi = (strategy: string | undefined, migratable: boolean, reason = 'DisksNotLiveMigratable'): Vmi => ({
  metadata: { name: 'vm1', namespace: 'ns1', uid: 'u1' },
  spec: strategy ? { evictionStrategy: strategy } : {},
  status: {
    nodeName: 'node-1',
    phase: 'Running',
    conditions: [
      { type: 'LiveMigratable', status: migratable ? 'True' : 'False', ...(migratable ? {} : { reason }) },
    ],
  },
});

describe('KubeVirt cluster settings', () => {
  it('reads the drain taint key, strategy and limits from the Deployed KubeVirt CR', () => {
    const s = clusterSettings([
      {
        status: { phase: 'Deleting' },
        spec: { configuration: { migrations: { nodeDrainTaintKey: 'wrong/key' } } },
      },
      {
        status: { phase: 'Deployed' },
        spec: {
          configuration: {
            evictionStrategy: 'LiveMigrate',
            migrations: { nodeDrainTaintKey: 'example.org/drain', parallelOutboundMigrationsPerNode: 4 },
          },
        },
      },
    ]);
    expect(s).toMatchObject({
      installed: true,
      drainTaintKey: 'example.org/drain',
      evictionStrategy: 'LiveMigrate',
      parallelMigrationsPerCluster: 5,
      parallelOutboundMigrationsPerNode: 4,
    });
  });

  it('defaults to kubevirt.io/drain and strategy None, and reports absence when there is no CR or CRD', () => {
    expect(clusterSettings([{ spec: { configuration: { evictionStrategy: 'Bogus' } } }])).toMatchObject({
      installed: true,
      drainTaintKey: 'kubevirt.io/drain',
      evictionStrategy: 'None',
    });
    expect(clusterSettings(undefined).installed).toBe(false);
    expect(clusterSettings([]).installed).toBe(false);
  });
});

describe('VMI classification', () => {
  const cluster = clusterSettings([{ spec: { configuration: { evictionStrategy: 'LiveMigrate' } } }]);

  it("takes the VMI's own strategy over the cluster's", () => {
    expect(effectiveStrategy(vmi('None', true), cluster)).toBe('None');
    expect(effectiveStrategy(vmi(undefined, true), cluster)).toBe('LiveMigrate');
  });

  it('migrates LiveMigrate and migratable LiveMigrateIfPossible VMIs', () => {
    expect(classify(vmi('LiveMigrate', true), cluster, 'block')).toMatchObject({
      klass: 'migrate',
      action: 'live-migrate',
    });
    expect(classify(vmi('LiveMigrateIfPossible', true), cluster, 'block')).toMatchObject({
      klass: 'migrate',
    });
  });

  it('blocks a LiveMigrate VMI that cannot migrate, naming the condition reason', () => {
    const c = classify(vmi('LiveMigrate', false, 'DisksNotLiveMigratable'), cluster, 'block');
    expect(c).toMatchObject({ klass: 'blocked', action: 'none', reason: 'DisksNotLiveMigratable' });
  });

  it('turns the blocked class into shutdown or skip by policy', () => {
    expect(classify(vmi('LiveMigrate', false), cluster, 'shutdown').action).toBe('shutdown');
    expect(classify(vmi('LiveMigrate', false), cluster, 'skip').action).toBe('skip');
  });

  it('leaves None and non-migratable LiveMigrateIfPossible VMIs to the pod drain, External to its own controller (or, with external: migrate, to drainer as that controller)', () => {
    expect(classify(vmi('None', true), cluster, 'block')).toMatchObject({
      klass: 'stop',
      action: 'shutdown',
    });
    expect(classify(vmi('LiveMigrateIfPossible', false), cluster, 'block')).toMatchObject({ klass: 'stop' });
    expect(classify(vmi('External', true), cluster, 'block', 'migrate')).toMatchObject({
      klass: 'migrate',
      action: 'live-migrate',
    });
    expect(classify(vmi('External', false), cluster, 'block', 'migrate')).toMatchObject({
      klass: 'blocked',
      action: 'none',
    });
    expect(classify(vmi('External', true), cluster, 'block')).toMatchObject({
      klass: 'external',
      action: 'external',
    });
  });

  it('counts a VMI as moved only when it runs elsewhere after a completed, not failed, migration', () => {
    const moved: Vmi = {
      ...vmi('LiveMigrate', true),
      status: { nodeName: 'node-2', migrationState: { completed: true } },
    };
    const failed: Vmi = {
      ...vmi('LiveMigrate', true),
      status: { nodeName: 'node-2', migrationState: { completed: true, failed: true } },
    };
    expect(migratedAway(moved, 'node-1')).toBe(true);
    expect(migratedAway(failed, 'node-1')).toBe(false);
    expect(migratedAway(vmi('LiveMigrate', true), 'node-1')).toBe(false);
    expect(migratedAway(undefined, 'node-1')).toBe(false);
  });
});
