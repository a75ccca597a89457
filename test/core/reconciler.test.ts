import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { MAINTENANCE_FINALIZER, type MaintenanceMode } from '../../src/core/agent/desired.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { EVACUATING_TAINT, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import type { PluginRecord } from '../../src/core/backends/plugin.ts';
import { failedOne, FakeCluster, FakeHost, quietLogger, succeeded, type FakePlugin } from './fakes.ts';

function setup(
  opts: { plugins?: FakePlugin[]; mode?: MaintenanceMode; config?: Record<string, unknown> } = {},
) {
  const cluster = new FakeCluster();
  const host = new FakeHost(
    opts.plugins ?? [{ name: 'nova', evacuate: async () => succeeded('nova', ['vm-1']) }],
  );
  const config = configSchema.parse({ nodeMaintenance: { mode: opts.mode ?? 'own' }, ...opts.config });
  const reconciler = new Reconciler({ cluster, host, config, log: quietLogger() });
  const signal = new AbortController().signal;
  const reconcile = (node = 'node-7', s = signal) => reconciler.reconcile(node, s);
  return { cluster, host, reconciler, reconcile };
}

const hasTaint = (c: FakeCluster, node: string) =>
  (c.node(node).spec.taints ?? []).some((t) => t.key === EVACUATING_TAINT.key);

describe('reconciler: cordon and uncordon', () => {
  it('evacuates a cordoned node: record first, plugins, then the pod drain, ending Evacuated', async () => {
    let recordWhenPluginRan: unknown;
    const { cluster, reconcile } = setup({
      plugins: [
        {
          name: 'nova',
          evacuate: async () => {
            recordWhenPluginRan = cluster.record('node-7')?.phase;
            return succeeded('nova', ['vm-1', 'vm-2']);
          },
        },
      ],
    });
    cluster.addNode('node-7', { unschedulable: true });

    await reconcile();

    expect(recordWhenPluginRan).toBe('Evacuating');
    expect(cluster.writes[0]).toBe(`annotation ${STATE_ANNOTATION}`);
    expect(cluster.writes.indexOf('drain')).toBeGreaterThan(
      cluster.writes.indexOf(`taint+ ${EVACUATING_TAINT.key}`),
    );
    const rec = cluster.record('node-7');
    expect(rec).toMatchObject({
      phase: 'Evacuated',
      trigger: 'cordon',
      cordonedByUs: false,
      taintedByUs: true,
    });
    expect(rec?.outcomes).toEqual([{ plugin: 'nova', succeeded: true, moved: 2, failed: 0 }]);
    expect(rec?.drain).toMatchObject({ succeeded: true, evicted: 1 });
    expect(hasTaint(cluster, 'node-7')).toBe(true);
    expect(cluster.reasons()).toEqual([
      'EvacuationPlanned',
      'EvacuationStarted',
      'DrainStarted',
      'DrainSucceeded',
      'EvacuationSucceeded',
    ]);
  });

  it('never evacuates a node labelled drainer.dev/ignore=true: says so in an Event, changes nothing', async () => {
    const { cluster, host, reconcile, reconciler } = setup();
    const node = cluster.addNode('node-7', { unschedulable: true });
    node.metadata.labels = { 'drainer.dev/ignore': 'true' };

    await reconcile();

    expect(host.evacuateCalls).toBe(0);
    expect(cluster.record('node-7')).toBeUndefined();
    expect(hasTaint(cluster, 'node-7')).toBe(false);
    expect(cluster.events.map((e) => [e.reason, e.message])).toEqual([
      [
        'EvacuationBlocked',
        'node node-7 is labelled drainer.dev/ignore=true: not evacuated (trigger cordon)',
      ],
    ]);
    // run-once refuses it too, naming the label
    await expect(reconciler.evacuateNow('node-7', new AbortController().signal, 'run-once')).rejects.toThrow(
      /node node-7 is labelled drainer\.dev\/ignore=true: drainer never evacuates it/,
    );
    expect(host.evacuateCalls).toBe(0);
  });

  it('does nothing for an evacuated node whose inputs did not change', async () => {
    const { cluster, host, reconcile } = setup();
    cluster.addNode('node-7', { unschedulable: true });
    await reconcile();
    const writes = cluster.writes.length;

    await reconcile();

    expect(cluster.writes.length).toBe(writes);
    expect(host.evacuateCalls).toBe(1);
  });

  it('restores on uncordon: plugin restore gets its record, taint removed, annotation gone, cordon untouched', async () => {
    const restored: (PluginRecord | undefined)[] = [];
    const { cluster, reconcile } = setup({
      plugins: [
        {
          name: 'nova',
          evacuate: async (ctx) => {
            await ctx.save({ disabledByUs: true });
            return succeeded('nova');
          },
          restore: async (ctx) => void restored.push(ctx.record),
        },
      ],
    });
    cluster.addNode('node-7', { unschedulable: true });
    await reconcile();

    cluster.node('node-7').spec.unschedulable = false; // kubectl uncordon
    await reconcile();

    expect(restored).toEqual([{ disabledByUs: true }]);
    expect(hasTaint(cluster, 'node-7')).toBe(false);
    expect(cluster.node('node-7').metadata.annotations?.[STATE_ANNOTATION]).toBeUndefined();
    expect(cluster.writes).not.toContain('unschedulable false');
    expect(cluster.reasons()).toContain('RestoreSucceeded');
  });

  it('does not drain pods when a plugin failed, and marks the node Failed with the reason', async () => {
    const { cluster, reconcile } = setup({
      plugins: [
        {
          name: 'nova',
          evacuate: async () => failedOne('nova', 'no valid host', 3),
        },
      ],
    });
    cluster.addNode('node-7', { unschedulable: true });

    const result = await reconcile();

    expect(cluster.drainCalls).toBe(0);
    const rec = cluster.record('node-7');
    expect(rec?.phase).toBe('Failed');
    expect(rec?.lastError).toContain('db-1: no valid host');
    expect(cluster.events.find((e) => e.reason === 'EvacuationFailed')?.message).toContain('db-1');
    expect(result.requeueAfterMs).toBe(300_000);
  });

  it('retries a Failed evacuation only after the resync interval, not on its own annotation writes', async () => {
    let attempts = 0;
    const { cluster, reconcile } = setup({
      config: { resyncInterval: 0 },
      plugins: [
        {
          name: 'nova',
          evacuate: async () => {
            attempts++;
            return attempts === 1
              ? { plugin: 'nova', succeeded: false, workloads: [], message: 'boom' }
              : succeeded('nova');
          },
        },
      ],
    });
    cluster.addNode('node-7', { unschedulable: true });
    await reconcile();
    expect(cluster.record('node-7')?.phase).toBe('Failed');

    await reconcile(); // resyncInterval 0: due at once

    expect(attempts).toBe(2);
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuated' });
    expect(cluster.record('node-7')?.lastError).toBeUndefined();
  });

  it('waits for the resync interval before retrying a Failed evacuation', async () => {
    const { cluster, host, reconcile } = setup({
      plugins: [
        { name: 'nova', evacuate: async () => ({ plugin: 'nova', succeeded: false, workloads: [] }) },
      ],
    });
    cluster.addNode('node-7', { unschedulable: true });
    await reconcile();

    const again = await reconcile();

    expect(host.evacuateCalls).toBe(1);
    expect(again.requeueAfterMs).toBeGreaterThan(0);
  });

  it('fails the evacuation naming the pod when the drain fails', async () => {
    const { cluster, reconcile } = setup();
    cluster.drainResult = () => ({
      succeeded: false,
      evicted: [],
      ignored: [],
      failed: [
        {
          pod: { namespace: 'shop', name: 'db-0' },
          reason: 'blocked by PodDisruptionBudget shop/db (0 disruptions allowed)',
        },
      ],
      total: 1,
    });
    cluster.addNode('node-7', { unschedulable: true });

    await reconcile();

    const rec = cluster.record('node-7');
    expect(rec?.phase).toBe('Failed');
    expect(rec?.lastError).toContain('shop/db-0');
    expect(rec?.drain?.failed).toEqual([{ pod: 'shop/db-0', reason: expect.stringContaining('shop/db') }]);
  });

  it('leaves pods that a plugin handles to that plugin', async () => {
    let skipped: string | undefined;
    const { cluster, reconcile } = setup({
      plugins: [
        {
          name: 'kubevirt',
          evacuate: async () => ({
            ...succeeded('kubevirt'),
            handledPods: [{ namespace: 'vms', name: 'virt-launcher-a' }],
          }),
        },
      ],
    });
    cluster.drainResult = (_n, skip) => {
      skipped = skip?.({ namespace: 'vms', name: 'virt-launcher-a' });
      return { succeeded: true, evicted: [], ignored: [], failed: [], total: 0 };
    };
    cluster.addNode('node-7', { unschedulable: true });

    await reconcile();

    expect(skipped).toBe('handled by the kubevirt plugin');
  });

  it('survives a garbage record: it is left as it is (never cleared), nothing is undone, an Event says so', async () => {
    const { cluster, reconcile } = setup();
    cluster.addNode('node-7').metadata.annotations = { [STATE_ANNOTATION]: '{not json' };

    await reconcile();

    expect(cluster.node('node-7').metadata.annotations?.[STATE_ANNOTATION]).toBe('{not json');
    expect(cluster.writes).toEqual([]);
    expect(cluster.reasons()).toEqual(['RecordUnreadable']);
  });
});

describe('reconciler: resume and cancel', () => {
  it('resumes an Evacuating record: the plugin gets its saved record and keeps the original start', async () => {
    const seen: (PluginRecord | undefined)[] = [];
    const { cluster, reconcile } = setup({
      plugins: [{ name: 'nova', evacuate: async (ctx) => (seen.push(ctx.record), succeeded('nova')) }],
    });
    const node = cluster.addNode('node-7', { unschedulable: true });
    const since = '2024-05-01T10:00:00.000Z';
    node.metadata.annotations = {
      [STATE_ANNOTATION]: JSON.stringify({
        phase: 'Evacuating',
        trigger: 'cordon',
        since,
        cordonedByUs: false,
        taintedByUs: true,
        plugins: { nova: { migrations: { 'vm-1': { attempts: 1 } } } },
      }),
    };

    await reconcile();

    expect(seen).toEqual([{ migrations: { 'vm-1': { attempts: 1 } } }]);
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuated', since });
    expect(cluster.reasons()).not.toContain('EvacuationPlanned');
  });

  it('cancels a running evacuation when asked, keeping the record for the restore', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const { cluster, reconciler, reconcile } = setup({
      plugins: [
        {
          name: 'nova',
          evacuate: async (ctx) => {
            started();
            await new Promise((r) => ctx.signal.addEventListener('abort', r));
            return { plugin: 'nova', succeeded: false, workloads: [], message: 'cancelled' };
          },
        },
      ],
    });
    cluster.addNode('node-7', { unschedulable: true });
    const pass = reconcile();
    await running;

    expect(reconciler.cancel('node-7', 'node uncordoned')).toBe(true);
    const result = await pass;

    expect(result).toEqual({ requeueAfterMs: 0 });
    expect(cluster.record('node-7')?.phase).toBe('Evacuating');
    expect(cluster.drainCalls).toBe(0);
    expect(cluster.reasons()).not.toContain('EvacuationFailed');
  });

  it('on shutdown mid-evacuation keeps the record Evacuating and does not uncordon', async () => {
    const stop = new AbortController();
    const { cluster, reconcile } = setup({
      plugins: [
        {
          name: 'nova',
          evacuate: async () => {
            stop.abort();
            return { plugin: 'nova', succeeded: false, workloads: [] };
          },
        },
      ],
    });
    cluster.addNode('node-7', { unschedulable: true });

    const result = await reconcile('node-7', stop.signal);

    expect(result).toEqual({});
    expect(cluster.record('node-7')?.phase).toBe('Evacuating');
    expect(cluster.node('node-7').spec.unschedulable).toBe(true);
  });
});

describe('reconciler: NodeMaintenance (mode own)', () => {
  it('takes a NodeMaintenance on a schedulable node: finalizer, cordon, status Succeeded', async () => {
    const { cluster, reconcile } = setup();
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-1', 'node-7');

    await reconcile();

    const nm = cluster.nm('nm-1');
    expect(nm.metadata.finalizers).toEqual([MAINTENANCE_FINALIZER]);
    expect(nm.metadata.annotations?.['drainer.dev/node']).toBe('node-7');
    expect(nm.status).toMatchObject({ phase: 'Succeeded', drainProgress: 100, lastError: '' });
    expect(nm.status?.lastUpdate).toBeDefined();
    expect(cluster.node('node-7').spec.unschedulable).toBe(true);
    expect(cluster.record('node-7')).toMatchObject({ trigger: 'NodeMaintenance/nm-1', cordonedByUs: true });
    // the cordon and the taint ride on the record write that says drainer made them: one write
    const at = cluster.writes.indexOf('unschedulable true');
    expect(cluster.writes.slice(at - 1, at + 2)).toEqual([
      `annotation ${STATE_ANNOTATION}`,
      'unschedulable true',
      `taint+ ${EVACUATING_TAINT.key}`,
    ]);
    expect(cluster.reasons('NodeMaintenance')).toContain('EvacuationSucceeded');
  });

  it("decides on the agent's watched NodeMaintenances; without a watch (run-once) it lists them", async () => {
    const { cluster, reconciler, reconcile } = setup();
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-1', 'node-7');

    // the agent's watch has not brought nm-1 yet: this pass acts on what the watch holds
    await reconciler.reconcile('node-7', new AbortController().signal, { maintenances: [] });
    expect(cluster.lists).toBe(0);
    expect(cluster.record('node-7')).toBeUndefined();

    await reconcile();
    expect(cluster.lists).toBe(1);
    expect(cluster.record('node-7')).toMatchObject({ trigger: 'NodeMaintenance/nm-1' });
  });

  it('on deletion restores, uncordons the node it cordoned, then lets the NodeMaintenance go', async () => {
    const { cluster, reconcile } = setup();
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-1', 'node-7');
    await reconcile();

    cluster.deleteMaintenance('nm-1');
    await reconcile();

    expect(cluster.nms).toEqual([]);
    expect(cluster.node('node-7').spec.unschedulable).toBeUndefined();
    expect(cluster.record('node-7')).toBeUndefined();
    expect(cluster.writes.indexOf('nm-finalizer- nm-1')).toBeGreaterThan(
      cluster.writes.indexOf('unschedulable false'),
    );
  });

  it('keeps a human cordon after the NodeMaintenance is deleted', async () => {
    const { cluster, host, reconcile } = setup();
    cluster.addNode('node-7', { unschedulable: true });
    cluster.addMaintenance('nm-1', 'node-7');
    await reconcile();
    expect(cluster.record('node-7')).toMatchObject({ cordonedByUs: false, phase: 'Evacuated' });

    cluster.deleteMaintenance('nm-1');
    await reconcile();

    expect(cluster.node('node-7').spec.unschedulable).toBe(true);
    expect(cluster.nms).toEqual([]); // finalizer released
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuated', trigger: 'cordon' });
    expect(host.restoreCalls).toBe(0);
  });

  it('fails a second NodeMaintenance for the same node; the older one wins', async () => {
    const { cluster, reconcile } = setup();
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-new', 'node-7', '2024-01-02T00:00:00Z');
    cluster.addMaintenance('nm-old', 'node-7', '2024-01-01T00:00:00Z');

    await reconcile();

    expect(cluster.nm('nm-new').status).toMatchObject({
      phase: 'Failed',
      lastError: expect.stringContaining('a NodeMaintenance for node node-7 already exists'),
    });
    expect(cluster.nm('nm-new').metadata.finalizers).toBeUndefined();
    expect(cluster.nm('nm-old').status?.phase).toBe('Succeeded');
    expect(cluster.record('node-7')?.trigger).toBe('NodeMaintenance/nm-old');
  });

  it('fails a NodeMaintenance whose nodeName changed, and restores the node it acted on', async () => {
    const { cluster, reconcile } = setup();
    cluster.addNode('node-7');
    cluster.addNode('node-8');
    cluster.addMaintenance('nm-1', 'node-7');
    await reconcile();

    cluster.nm('nm-1').spec.nodeName = 'node-8';
    await reconcile();
    await reconcile('node-8');

    expect(cluster.nm('nm-1').status).toMatchObject({
      phase: 'Failed',
      lastError: expect.stringContaining('nodeName'),
    });
    expect(cluster.nm('nm-1').metadata.finalizers).toEqual([]);
    expect(cluster.record('node-7')).toBeUndefined();
    expect(cluster.node('node-7').spec.unschedulable).toBeUndefined();
    expect(cluster.record('node-8')).toBeUndefined();
  });

  it('marks a NodeMaintenance for a missing node Failed, once, guarded by resourceVersion', async () => {
    const { cluster, reconciler } = setup();
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-ghost', 'node-99');
    const [seenByA] = await cluster.listMaintenances();
    const [seenByB] = await cluster.listMaintenances();

    await reconciler.checkMaintenance(seenByA!);
    await reconciler.checkMaintenance(seenByB!); // stale copy: 409, quietly done

    expect(cluster.nm('nm-ghost').status).toMatchObject({
      phase: 'Failed',
      lastError: 'node node-99 does not exist',
    });
    expect(cluster.writes.filter((w) => w.startsWith('nm-status'))).toHaveLength(1);
  });

  it('in mode observe moves the VMs only: no NodeMaintenance writes, no pod drain, the CR named in the trigger', async () => {
    const { cluster, reconcile } = setup({ mode: 'observe' });
    cluster.addNode('node-7', { unschedulable: true }); // the operator cordoned it
    cluster.addMaintenance('nm-1', 'node-7');

    await reconcile();

    expect(cluster.writes.filter((w) => w.startsWith('nm-'))).toEqual([]);
    expect(cluster.nm('nm-1').metadata.finalizers).toBeUndefined();
    expect(cluster.drainCalls).toBe(0); // the operator drains the pods of its own CRs
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuated', trigger: 'NodeMaintenance/nm-1' });
  });

  it('ignores NodeMaintenances in mode off', async () => {
    const { cluster, host, reconcile } = setup({ mode: 'off' });
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-1', 'node-7');

    await reconcile();

    expect(host.evacuateCalls).toBe(0);
    expect(cluster.writes).toEqual([]);
  });
});

describe('reconciler: dry run', () => {
  it('changes nothing in the cluster but still walks the steps once', async () => {
    const { dryRunCluster } = await import('../../src/core/cluster/dry-run-cluster.ts');
    const cluster = new FakeCluster();
    cluster.addNode('node-7', { unschedulable: true });
    const host = new FakeHost([{ name: 'nova', evacuate: async () => succeeded('nova') }]);
    const config = configSchema.parse({ dryRun: true });
    const reconciler = new Reconciler({
      cluster: dryRunCluster(cluster, quietLogger()),
      host,
      config,
      log: quietLogger(),
    });
    const signal = new AbortController().signal;

    await reconciler.reconcile('node-7', signal);
    await reconciler.reconcile('node-7', signal);

    expect(cluster.writes).toEqual([]);
    expect(cluster.events).toEqual([]);
    expect(host.evacuateCalls).toBe(1);
  });
});
