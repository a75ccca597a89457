// Story: a NodeMaintenance made drainer cordon the node. It is deleted, and while the restore gives
// the node back, an operator lifts the cordon and puts it back for a maintenance of their own. The
// restore takes off only the cordon its maintenance depended on: the operator's stays (issue 48).
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';

function setup(duringRestore: (cluster: FakeCluster) => Promise<void>) {
  const cluster = new FakeCluster();
  const host = new FakeHost([
    {
      name: 'nova',
      evacuate: async ({ save }) => {
        await save({ disabledByUs: true });
        return succeeded('nova', ['vm-1']);
      },
      restore: () => duringRestore(cluster),
    },
  ]);
  const config = configSchema.parse({ nodeMaintenance: { mode: 'own' } });
  const reconciler = new Reconciler({ cluster, host, config, log: quietLogger() });
  const reconcile = () => reconciler.reconcile('node-7', new AbortController().signal);
  return { cluster, reconcile };
}

describe('restore: only the cordon its maintenance depends on', () => {
  it("an operator's cordon made during the restore survives it", async () => {
    const { cluster, reconcile } = setup(async (c) => {
      await c.setUnschedulable('node-7', false); // kubectl uncordon
      await c.setUnschedulable('node-7', true); // kubectl cordon
    });
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-1', 'node-7');
    await reconcile();
    expect(cluster.record('node-7')).toMatchObject({ cordonedByUs: true, phase: 'Evacuated' });

    cluster.deleteMaintenance('nm-1');
    await reconcile();

    expect(cluster.node('node-7').spec.unschedulable).toBe(true);
    expect(cluster.nms).toEqual([]);
    const restored = cluster.events.find((e) => e.reason === 'RestoreSucceeded');
    expect(restored?.message).toMatch(/cordon kept: uncordoned and cordoned again by someone else/);
    // the next pass sees a cordon that is not drainer's: a new maintenance, evacuated for it
    await reconcile();
    expect(cluster.record('node-7')).toMatchObject({ trigger: 'cordon', cordonedByUs: false });
  });

  it('with nobody touching the cordon, the restore takes it off', async () => {
    const { cluster, reconcile } = setup(async () => undefined);
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-1', 'node-7');
    await reconcile();

    cluster.deleteMaintenance('nm-1');
    await reconcile();

    expect(cluster.node('node-7').spec.unschedulable).toBeUndefined();
    expect(cluster.record('node-7')).toBeUndefined();
    const restored = cluster.events.find((e) => e.reason === 'RestoreSucceeded');
    expect(restored?.message).toMatch(/\(nova, uncordoned\)/);
  });
});
