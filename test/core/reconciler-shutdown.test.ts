// Story: the host goes down outside Kubernetes. The agent marked its Node drainer.dev/shutdown on
// logind's PrepareForShutdown (src/logind, core/shutdown); the reconciler evacuates for it at once,
// cordoning as drainer's own cordon, past a fleet budget that has no slot free (the host goes down
// anyway). After boot the mark comes off: drainer's cordon comes off with it, an operator's stays.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import type { EvacuationBudget, Slot } from '../../src/core/fleet/types.ts';
import { SHUTDOWN_ANNOTATION } from '../../src/core/shutdown/mark.ts';
import { FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';

/** A fleet whose every slot is taken for good: a node asking for one would wait forever. */
const fullFleet: EvacuationBudget = {
  acquire: (o: { signal: AbortSignal }) =>
    new Promise<Slot | undefined>((r) => o.signal.addEventListener('abort', () => r(undefined))),
};

function setup(cordoned = false) {
  const cluster = new FakeCluster();
  const host = new FakeHost([{ name: 'nova', evacuate: async () => succeeded('nova', ['vm-1']) }]);
  const config = configSchema.parse({ fleet: { maxConcurrentEvacuations: 1 } });
  const reconciler = new Reconciler({ cluster, host, config, budget: fullFleet, log: quietLogger() });
  const signal = new AbortController().signal;
  cluster.addNode('node-7', cordoned ? { unschedulable: true } : {});
  const mark = (on: boolean) => {
    const n = cluster.node('node-7');
    const annotations = { ...n.metadata.annotations };
    if (on) annotations[SHUTDOWN_ANNOTATION] = '2026-11-28T05:00:00.000Z';
    else delete annotations[SHUTDOWN_ANNOTATION];
    n.metadata.annotations = annotations;
  };
  return { cluster, host, mark, reconcile: () => reconciler.reconcile('node-7', signal) };
}

describe('a host shutdown as a trigger', () => {
  it("evacuates at once past a full fleet, cordoning as drainer's own cordon, and gives the node back after boot", async () => {
    const { cluster, mark, reconcile } = setup();
    mark(true);
    await reconcile();
    expect(cluster.record('node-7')).toMatchObject({
      phase: 'Evacuated',
      trigger: 'shutdown',
      cordonedByUs: true,
    });
    expect(cluster.node('node-7').spec.unschedulable).toBe(true);

    mark(false); // after boot, node and nova-compute ready
    await reconcile();
    expect(cluster.record('node-7')).toBeUndefined();
    expect(cluster.node('node-7').spec.unschedulable).not.toBe(true);
  });

  it("keeps an operator's cordon made before the shutdown", async () => {
    const { cluster, mark, reconcile } = setup(true);
    mark(true);
    await reconcile();
    expect(cluster.record('node-7')).toMatchObject({
      phase: 'Evacuated',
      trigger: 'shutdown',
      cordonedByUs: false,
    });

    mark(false);
    await reconcile();
    expect(cluster.node('node-7').spec.unschedulable).toBe(true);
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuated', trigger: 'cordon' });
  });
});
