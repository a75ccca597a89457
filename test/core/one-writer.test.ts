// Issue 23 item 5: every record write carries the resourceVersion it read. A late writer (here a
// plugin whose save comes after a restore cleared the record, as an abandoned one's would) never
// writes its old record back; a Node change that left the record alone costs a re-read, not the write.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import type { PluginRecord } from '../../src/core/backends/plugin.ts';
import { STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { RecordConflictError } from '../../src/errors.ts';
import { FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';

describe('one writer per record', () => {
  it('a plugin that saves after a restore cleared the record cannot write its old record back', async () => {
    const cluster = new FakeCluster();
    let lateSave: ((r: PluginRecord) => Promise<void>) | undefined;
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: async (ctx) => {
          lateSave = ctx.save; // kept, as a plugin abandoned after a timeout keeps running
          await ctx.save({ disabledByUs: true });
          return succeeded('nova', ['vm-1']);
        },
      },
    ]);
    const config = configSchema.parse({});
    const reconciler = new Reconciler({ cluster, host, config, log: quietLogger() });
    const signal = new AbortController().signal;
    const node = cluster.addNode('node-7', { unschedulable: true });
    await reconciler.reconcile('node-7', signal);
    expect(cluster.record('node-7')?.phase).toBe('Evacuated');

    node.spec.unschedulable = false; // uncordon: the restore clears the record
    await reconciler.reconcile('node-7', signal);
    expect(node.metadata.annotations?.[STATE_ANNOTATION]).toBeUndefined();

    await expect(lateSave?.({ disabledByUs: true, late: true })).rejects.toThrow(RecordConflictError);
    expect(node.metadata.annotations?.[STATE_ANNOTATION]).toBeUndefined();
  });

  it('a Node change that left the record alone (a label, the kubelet) is re-read and the write goes on', async () => {
    const cluster = new FakeCluster();
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: async (ctx) => {
          // someone else writes the Node meanwhile, not our record
          const n = cluster.node('node-7');
          n.metadata.labels = { ...n.metadata.labels, team: 'blue' };
          n.metadata.resourceVersion = String(Number(n.metadata.resourceVersion) + 100);
          await ctx.save({ disabledByUs: true });
          return succeeded('nova', ['vm-1']);
        },
      },
    ]);
    const reconciler = new Reconciler({ cluster, host, config: configSchema.parse({}), log: quietLogger() });
    cluster.addNode('node-7', { unschedulable: true });

    await reconciler.reconcile('node-7', new AbortController().signal);

    expect(cluster.record('node-7')).toMatchObject({
      phase: 'Evacuated',
      plugins: { nova: { disabledByUs: true } },
    });
  });

  it('a record another agent wrote meanwhile stops this pass: it reads again and decides again', async () => {
    const cluster = new FakeCluster();
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: async (ctx) => {
          // the other agent (e.g. the new pod of a rollout) wrote the record since we read it
          const n = cluster.node('node-7');
          const theirs = JSON.parse(n.metadata.annotations?.[STATE_ANNOTATION] ?? '{}') as object;
          n.metadata.annotations = { [STATE_ANNOTATION]: JSON.stringify({ ...theirs, phase: 'Evacuated' }) };
          n.metadata.resourceVersion = String(Number(n.metadata.resourceVersion) + 100);
          await ctx.save({ disabledByUs: true });
          return succeeded('nova');
        },
      },
    ]);
    const reconciler = new Reconciler({ cluster, host, config: configSchema.parse({}), log: quietLogger() });
    cluster.addNode('node-7', { unschedulable: true });

    await expect(reconciler.reconcile('node-7', new AbortController().signal)).rejects.toThrow(
      RecordConflictError,
    );
    expect(cluster.record('node-7')?.phase).toBe('Evacuated');
    expect(cluster.reasons()).not.toContain('EvacuationSucceeded');
  });

  it('a restore whose record the agent took over meanwhile stops there, naming where to look, not "reading it again"', async () => {
    const cluster = new FakeCluster();
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: async (ctx) => {
          await ctx.save({ disabledByUs: true });
          return succeeded('nova', ['vm-1']);
        },
        restore: async () => {
          // the node's agent (the node still cordoned) starts its next evacuation meanwhile
          const n = cluster.node('node-7');
          const theirs = JSON.parse(n.metadata.annotations?.[STATE_ANNOTATION] ?? '{}') as object;
          n.metadata.annotations = {
            [STATE_ANNOTATION]: JSON.stringify({ ...theirs, phase: 'Evacuating', id: 'theirs' }),
          };
          n.metadata.resourceVersion = String(Number(n.metadata.resourceVersion) + 100);
          return Promise.resolve();
        },
      },
    ]);
    const reconciler = new Reconciler({ cluster, host, config: configSchema.parse({}), log: quietLogger() });
    cluster.addNode('node-7', { unschedulable: true });
    await reconciler.reconcile('node-7', new AbortController().signal);

    const restored = reconciler.restoreNow('node-7', new AbortController().signal, true);

    await expect(restored).rejects.toThrow(RecordConflictError);
    await expect(restored).rejects.toThrow(
      /^node node-7: its record was written by someone else while this restore ran \(its agent, or another run\): restore stopped there; `drainer status --node node-7` shows where the node stands$/,
    );
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Evacuating', id: 'theirs' });
  });
});
