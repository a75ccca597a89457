import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Agent, type WatchSources } from '../../src/core/agent/agent.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { FakeCluster, FakeHost, FakeSources, quietLogger, succeeded, type FakePlugin } from './fakes.ts';

/** A reconciler that counts its passes. */
class Counting extends Reconciler {
  passes = 0;
  override reconcile(...args: Parameters<Reconciler['reconcile']>) {
    this.passes++;
    return super.reconcile(...args);
  }
}

/** An agent of node-7 over a FakeCluster; `sources` may change how its watches see the cluster. */
function start(plugins: FakePlugin[], sources?: (fake: FakeSources) => WatchSources) {
  const cluster = new FakeCluster();
  cluster.addNode('node-7');
  const host = new FakeHost(plugins);
  const log = quietLogger();
  const config = configSchema.parse({});
  const reconciler = new Counting({ cluster, host, config, log });
  const stop = new AbortController();
  const fake = new FakeSources(cluster, 'node-7');
  const agent = new Agent({
    nodeName: 'node-7',
    reconciler,
    sources: sources?.(fake) ?? fake,
    mode: 'own',
    log,
    signal: stop.signal,
    backoff: { initialMs: 1, maxMs: 10 },
  });
  const running = agent.run();
  return { cluster, host, agent, reconciler, stop, running };
}

const until = async (what: string, cond: () => boolean) => {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 2));
  if (!cond()) throw new Error(`never happened: ${what}`);
};

/** A plugin that starts "migrations" and holds them until its signal aborts or the test releases it. */
function heldPlugin() {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let started = 0;
  const plugin: FakePlugin = {
    name: 'nova',
    evacuate: async (ctx) => {
      started++;
      await ctx.save({ disabledByUs: true });
      await Promise.race([released, new Promise((r) => ctx.signal.addEventListener('abort', r))]);
      return ctx.signal.aborted ? { plugin: 'nova', succeeded: false, workloads: [] } : succeeded('nova');
    },
    restore: async () => undefined,
  };
  return { plugin, release, started: () => started };
}

describe('agent', () => {
  it('is ready once its watches listed, and evacuates on a cordon seen by the watch', async () => {
    const { cluster, agent, stop, running } = start([
      { name: 'nova', evacuate: async () => succeeded('nova') },
    ]);
    await until('ready', () => agent.ready().ready);

    cluster.node('node-7').spec.unschedulable = true;
    cluster.changed(cluster.node('node-7'));
    await until('evacuated', () => cluster.record('node-7')?.phase === 'Evacuated');

    stop.abort();
    await running;
  });

  it('cancels a running evacuation on uncordon and restores the node', async () => {
    const held = heldPlugin();
    const { cluster, host, stop, running } = start([held.plugin]);
    cluster.node('node-7').spec.unschedulable = true;
    cluster.changed(cluster.node('node-7'));
    await until('evacuation started', () => held.started() === 1);

    cluster.node('node-7').spec.unschedulable = false;
    cluster.changed(cluster.node('node-7'));
    await until('restored', () => host.restoreCalls === 1 && cluster.record('node-7') === undefined);

    expect(cluster.drainCalls).toBe(0);
    expect(held.started()).toBe(1);
    expect(cluster.reasons()).not.toContain('EvacuationFailed');
    stop.abort();
    await running;
  });

  it('on shutdown leaves the record Evacuating and the node cordoned; a new agent resumes it', async () => {
    const first = heldPlugin();
    const a = start([first.plugin]);
    a.cluster.node('node-7').spec.unschedulable = true;
    a.cluster.changed(a.cluster.node('node-7'));
    await until('evacuation started', () => first.started() === 1);

    a.stop.abort();
    await a.running;
    expect(a.cluster.record('node-7')).toMatchObject({
      phase: 'Evacuating',
      plugins: { nova: { disabledByUs: true } },
    });
    expect(a.cluster.node('node-7').spec.unschedulable).toBe(true);

    // the next agent finds the record and hands the plugin its piece
    const seen: unknown[] = [];
    const host = new FakeHost([
      { name: 'nova', evacuate: async (ctx) => (seen.push(ctx.record), succeeded('nova')) },
    ]);
    const stop = new AbortController();
    const log = quietLogger();
    const agent = new Agent({
      nodeName: 'node-7',
      reconciler: new Reconciler({ cluster: a.cluster, host, config: configSchema.parse({}), log }),
      sources: new FakeSources(a.cluster, 'node-7'),
      mode: 'own',
      log,
      signal: stop.signal,
    });
    const running = agent.run();
    await until('evacuated', () => a.cluster.record('node-7')?.phase === 'Evacuated');
    expect(seen).toEqual([{ disabledByUs: true }]);
    stop.abort();
    await running;
  });

  it('restores when the NodeMaintenance is deleted, then lets it go', async () => {
    const { cluster, stop, running } = start([{ name: 'nova', evacuate: async () => succeeded('nova') }]);
    cluster.addMaintenance('nm-1', 'node-7');
    await until('evacuated', () => cluster.nm('nm-1').status?.phase === 'Succeeded');

    cluster.deleteMaintenance('nm-1');
    await until('released', () => cluster.nms.length === 0);

    expect(cluster.node('node-7').metadata.annotations?.[STATE_ANNOTATION]).toBeUndefined();
    expect(cluster.node('node-7').spec.unschedulable).toBeUndefined();
    stop.abort();
    await running;
  });

  it('marks a NodeMaintenance for a node that does not exist Failed', async () => {
    const { cluster, stop, running } = start([]);
    cluster.addMaintenance('nm-ghost', 'node-404');
    await until('marked', () => cluster.nm('nm-ghost').status?.phase === 'Failed');
    expect(cluster.nm('nm-ghost').status?.lastError).toBe('node node-404 does not exist');
    stop.abort();
    await running;
  });

  it('reconciles once at start, when the last of its watches has listed', async () => {
    let listMaintenances!: () => void;
    const maintenancesListed = new Promise<void>((r) => (listMaintenances = r));
    // the node lists at once; the NodeMaintenances only when the test says so
    const { cluster, agent, reconciler, stop, running } = start([], (fake) => ({
      watchNode: (cb) => fake.watchNode(cb),
      watchMaintenances: async (cb) => {
        await maintenancesListed;
        return fake.watchMaintenances(cb);
      },
    }));
    cluster.changed(cluster.node('node-7'));
    await new Promise((r) => setTimeout(r, 20));
    expect(reconciler.passes).toBe(0);
    expect(agent.ready().reasons).toEqual(['NodeMaintenance watch not synced']);

    listMaintenances();
    await until('ready', () => agent.ready().ready);
    await agent.idle();
    expect(reconciler.passes).toBe(1);

    cluster.node('node-7').metadata.labels = { rack: 'r1' };
    cluster.changed(cluster.node('node-7'));
    await until('a change reconciles again', () => reconciler.passes === 2);
    stop.abort();
    await running;
  });

  it('reads the NodeMaintenances from its own watch: no reconcile lists them cluster-wide', async () => {
    const { cluster, agent, stop, running } = start([
      { name: 'nova', evacuate: async () => succeeded('nova') },
    ]);
    await until('ready', () => agent.ready().ready);

    // an operator asks for maintenance, then ends it: evacuated, restored, let go
    cluster.addMaintenance('nm-1', 'node-7');
    await until('evacuated', () => cluster.nm('nm-1').status?.phase === 'Succeeded');
    cluster.node('node-7').metadata.labels = { rack: 'r1' };
    cluster.changed(cluster.node('node-7'));
    cluster.deleteMaintenance('nm-1');
    await until('released', () => cluster.nms.length === 0);
    await agent.idle();

    expect(cluster.record('node-7')).toBeUndefined();
    expect(cluster.lists).toBe(0);
    stop.abort();
    await running;
  });

  it("does not reconcile on the kubelet's status reports, only on a change the reconciler reads", async () => {
    const { cluster, agent, reconciler, stop, running } = start([]);
    await until('ready', () => agent.ready().ready);
    await agent.idle();
    expect(reconciler.passes).toBe(1);

    // every 5 minutes the kubelet posts the Node's status: a new resourceVersion, nothing drainer reads
    for (let i = 0; i < 3; i++) cluster.kubeletReport('node-7');
    await new Promise((r) => setTimeout(r, 20));
    await agent.idle();
    expect(reconciler.passes).toBe(1);

    cluster.node('node-7').metadata.labels = { 'drainer.dev/ignore': 'true' };
    cluster.changed(cluster.node('node-7'));
    await until('a label reconciles', () => reconciler.passes === 2);
    stop.abort();
    await running;
  });

  it("never overwrites a NodeMaintenance's status from a watch that has not brought its own last write yet", async () => {
    // the NodeMaintenance watch lags: its events wait while `lagging`, until the test lets them through
    let lagging = false;
    const held: (() => void)[] = [];
    const { cluster, agent, stop, running } = start(
      [{ name: 'nova', evacuate: async () => succeeded('nova') }],
      (fake) => ({
        watchNode: (cb) => fake.watchNode(cb),
        watchMaintenances: (cb) =>
          fake.watchMaintenances({
            ...cb,
            onEvent: (type, nm) => (lagging ? held.push(() => cb.onEvent(type, nm)) : cb.onEvent(type, nm)),
          }),
      }),
    );
    await until('ready', () => agent.ready().ready);

    cluster.addMaintenance('nm-1', 'node-7');
    lagging = true;
    await until('evacuated', () => cluster.record('node-7')?.phase === 'Evacuated');
    await agent.idle();
    // the pass after the evacuation (its record write woke it) saw the NodeMaintenance as it was before
    for (const deliver of held.splice(0)) deliver();
    lagging = false;
    await agent.idle();

    expect(cluster.nm('nm-1').status?.conditions?.[0]?.message).toBe(
      'virtual machines moved and pods drained',
    );
    stop.abort();
    await running;
  });
});
