import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import type { CapacityVerdict, Plan } from '../../src/core/backends/plugin.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { EVACUATING_TAINT, type NodeRecord } from '../../src/core/record/record.ts';
import { failedAfterChanges, FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';

const SHORT = 'nova: 1 of 2 servers does not fit: db-7 (16 vCPU, 64 GiB RAM) needs a host with 16 vCPU free';

function setup(capacityCheck: 'enforce' | 'warn' | 'off', verdict: () => CapacityVerdict | Error) {
  const cluster = new FakeCluster();
  const host = new FakeHost([
    {
      name: 'nova',
      plan: (): Plan => {
        const v = verdict();
        if (v instanceof Error) throw v;
        return { plugin: 'nova', location: 'compute-7', workloads: [], capacity: v };
      },
      evacuate: async () => succeeded('nova', ['vm-1']),
    },
  ]);
  const config = configSchema.parse({ resyncInterval: 0, evacuation: { capacityCheck } });
  const reconciler = new Reconciler({ cluster, host, config, log: quietLogger() });
  const reconcile = () => reconciler.reconcile('node-7', new AbortController().signal);
  return { cluster, host, reconcile };
}

const warnings = (c: FakeCluster, reason: string) =>
  c.events.filter((e) => e.reason === reason).map((e) => e.message);

describe('capacity pre-flight', () => {
  it('enforce: refuses a short node before any change, Failed with InsufficientCapacity', async () => {
    const { cluster, host, reconcile } = setup('enforce', () => ({ status: 'short', message: SHORT }));
    cluster.addNode('node-7', { unschedulable: true });

    await reconcile();

    expect(host.evacuateCalls).toBe(0);
    expect(cluster.node('node-7').spec.taints ?? []).toEqual([]);
    expect(cluster.writes.filter((w) => !w.startsWith('annotation'))).toEqual([]);
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Failed', lastError: SHORT, taintedByUs: false });
    expect(warnings(cluster, 'InsufficientCapacity')).toEqual([SHORT]);
    expect(cluster.reasons()).not.toContain('EvacuationStarted');
  });

  it('enforce on a NodeMaintenance: the node stays schedulable, the CR says Failed and why', async () => {
    const { cluster, reconcile } = setup('enforce', () => ({ status: 'short', message: SHORT }));
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-1', 'node-7');

    await reconcile();

    expect(cluster.node('node-7').spec.unschedulable).toBeUndefined();
    expect(cluster.nm('nm-1').status).toMatchObject({ phase: 'Failed', lastError: SHORT });
    expect(cluster.nm('nm-1').status?.conditions?.[0]?.reason).toBe('InsufficientCapacity');
    expect(cluster.reasons('NodeMaintenance')).toContain('InsufficientCapacity');
  });

  it('starts by itself at the next resync once room appears', async () => {
    let room = false;
    const { cluster, host, reconcile } = setup('enforce', () =>
      room
        ? { status: 'fits', message: 'nova: all 2 servers fit on 1 other host' }
        : { status: 'short', message: SHORT },
    );
    cluster.addNode('node-7', { unschedulable: true });
    await reconcile();
    expect(cluster.record('node-7')?.phase).toBe('Failed');

    room = true;
    await reconcile();

    expect(host.evacuateCalls).toBe(1);
    expect(cluster.record('node-7')).toMatchObject<Partial<NodeRecord>>({ phase: 'Evacuated' });
    expect(cluster.record('node-7')?.lastError).toBeUndefined();
  });

  it('warn: says the shortfall in an Event and evacuates anyway', async () => {
    const { cluster, host, reconcile } = setup('warn', () => ({ status: 'short', message: SHORT }));
    cluster.addNode('node-7', { unschedulable: true });

    await reconcile();

    expect(warnings(cluster, 'InsufficientCapacity')).toEqual([SHORT]);
    expect(host.evacuateCalls).toBe(1);
    expect(cluster.record('node-7')?.phase).toBe('Evacuated');
  });

  it('enforce: a check that could not run refuses, saying so (never a silent pass)', async () => {
    const { cluster, host, reconcile } = setup('enforce', () => ({
      status: 'unknown',
      reason: 'unavailable',
      message: 'Placement answered 503',
    }));
    cluster.addNode('node-7', { unschedulable: true });

    await reconcile();

    expect(host.evacuateCalls).toBe(0);
    expect(cluster.record('node-7')?.lastError).toBe(
      'nova: capacity check could not run: Placement answered 503',
    );
  });

  it('enforce: planning that fails leaves the capacity unknown, which refuses too', async () => {
    const { cluster, host, reconcile } = setup('enforce', () => new Error('nova unreachable'));
    cluster.addNode('node-7', { unschedulable: true });

    await reconcile();

    expect(host.evacuateCalls).toBe(0);
    expect(cluster.record('node-7')?.lastError).toMatch(
      /capacity check could not run: planning failed: nova unreachable/,
    );
  });

  it('a cloud without Placement: not checked, behaves as warn without a shortfall Event', async () => {
    const { cluster, host, reconcile } = setup('enforce', () => ({
      status: 'unknown',
      reason: 'unsupported',
      message: 'no placement service in the catalog',
    }));
    cluster.addNode('node-7', { unschedulable: true });

    await reconcile();

    expect(host.evacuateCalls).toBe(1);
    expect(warnings(cluster, 'InsufficientCapacity')).toEqual([]);
    expect(cluster.record('node-7')?.phase).toBe('Evacuated');
  });

  it('off: the verdict is not asked for and not read', async () => {
    const { cluster, host, reconcile } = setup('off', () => new Error('must not be asked'));
    cluster.addNode('node-7', { unschedulable: true });

    await reconcile();

    expect(host.evacuateCalls).toBe(1);
    expect(cluster.record('node-7')?.phase).toBe('Evacuated');
  });

  it('a resumed evacuation (changes already made) only warns', async () => {
    const { cluster, host, reconcile } = setup('enforce', () => ({ status: 'short', message: SHORT }));
    const node = cluster.addNode('node-7', { unschedulable: true });
    node.spec.taints = [{ ...EVACUATING_TAINT }];
    await cluster.setNodeAnnotation(
      'node-7',
      'drainer.dev/state',
      JSON.stringify({
        phase: 'Evacuating',
        trigger: 'cordon',
        since: new Date().toISOString(),
        taintedByUs: true,
      }),
    );

    await reconcile();

    expect(host.evacuateCalls).toBe(1);
    expect(warnings(cluster, 'InsufficientCapacity')).toEqual([SHORT]);
  });

  it('a retry of a Failed evacuation that changed things (service disabled, a server moved, taint on) only warns', async () => {
    const { cluster, host, reconcile } = setup('enforce', () => ({ status: 'short', message: SHORT }));
    const node = cluster.addNode('node-7', { unschedulable: true });
    node.spec.taints = [{ ...EVACUATING_TAINT }];
    await cluster.setNodeAnnotation('node-7', 'drainer.dev/state', JSON.stringify(failedAfterChanges()));

    await reconcile();

    expect(host.evacuateCalls).toBe(1);
    expect(warnings(cluster, 'InsufficientCapacity')).toEqual([SHORT]);
    expect(cluster.record('node-7')?.phase).toBe('Evacuated');
  });
});
