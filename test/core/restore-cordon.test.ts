// Story: a NodeMaintenance made drainer cordon the node. It is deleted, and while the restore gives
// the node back, an operator lifts the cordon and puts it back for a maintenance of their own. The
// restore takes off only the cordon its maintenance depended on: the operator's stays (issue 48).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { kubeCluster } from '../../src/core/cluster/kube-cluster.ts';
import { newRecord, serializeRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import type { KubeNode } from '../../src/kube/types.ts';
import { node, startFixture, type KubeFixture } from '../kube/sandbox.ts';
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

describe("restore over the sandbox's API server", () => {
  let f: KubeFixture;
  beforeEach(async () => {
    f = await startFixture();
  });
  afterEach(() => f.close());

  /** node-7 evacuated for a NodeMaintenance drainer cordoned it for; the NodeMaintenance is gone. */
  async function restoreWith(duringRestore: () => void): Promise<KubeNode> {
    const record = { ...newRecord('NodeMaintenance/nm-1', new Date()), phase: 'Evacuated' as const };
    f.server.store.create('nodes', {
      ...node('node-7'),
      metadata: {
        name: 'node-7',
        annotations: { [STATE_ANNOTATION]: serializeRecord({ ...record, cordonedByUs: true }) },
      },
      spec: { unschedulable: true },
    });
    const config = configSchema.parse({ nodeMaintenance: { mode: 'off' } });
    const log = quietLogger();
    const events = new EventRecorder({ k: f.k, log, host: 'node-7' });
    const cluster = kubeCluster({ k: f.k, events, drain: config.drain, log });
    const host = new FakeHost([
      { name: 'nova', evacuate: async () => succeeded('nova'), restore: async () => duringRestore() },
    ]);
    const reconciler = new Reconciler({ cluster, host, config, log });
    await reconciler.reconcile('node-7', new AbortController().signal);
    return f.server.store.get('nodes', undefined, 'node-7');
  }
  const cordon = (on: boolean) =>
    f.server.store.patch('nodes', undefined, 'node-7', 'application/merge-patch+json', {
      spec: { unschedulable: on ? true : null },
    });

  it("an operator's uncordon and cordon during the restore: the cordon stays", async () => {
    const n = await restoreWith(() => {
      cordon(false);
      cordon(true);
    });
    expect(n.spec?.unschedulable).toBe(true);
    expect(n.metadata.annotations?.[STATE_ANNOTATION]).toBeUndefined();
  });

  it("nobody touches it: drainer's cordon comes off", async () => {
    const n = await restoreWith(() => undefined);
    expect(n.spec?.unschedulable).toBeUndefined();
  });
});
