// Issue 23 item 4: a record written by another drainer version survives this one. Stories: a
// rollback leaves a record with an unknown phase and unknown fields; a roll forward finds fields
// it does not know.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import type { PluginRecord } from '../../src/core/backends/plugin.ts';
import { EVACUATING_TAINT, RECORD_SCHEMA, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { RecordUnreadableError } from '../../src/errors.ts';
import { UNREADABLE_ANNOTATION } from '../../src/names.ts';
import { FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';

function setup(restoreFails = false) {
  const cluster = new FakeCluster();
  const restored: (PluginRecord | undefined)[] = [];
  const host = new FakeHost([
    {
      name: 'nova',
      evacuate: async (ctx) => {
        await ctx.save({ ...ctx.record, disabledByUs: true });
        return succeeded('nova', ['vm-1']);
      },
      restore: async (ctx) => {
        restored.push(ctx.record);
        if (restoreFails) throw new Error('nova unreachable');
      },
    },
  ]);
  const unreadable: boolean[] = [];
  const config = configSchema.parse({});
  const reconciler = new Reconciler({
    cluster,
    host,
    config,
    log: quietLogger(),
    metrics: {
      evacuationFinished: () => undefined,
      phase: () => undefined,
      recordUnreadable: (u) => void unreadable.push(u),
    },
  });
  const signal = new AbortController().signal;
  return { cluster, host, reconciler, restored, unreadable, signal };
}

/** What a newer drainer wrote before it was rolled back: a phase and fields this one does not know. */
const fromTheFuture = JSON.stringify({
  phase: 'Verifying',
  trigger: 'cordon',
  since: '2026-01-01T00:00:00Z',
  cordonedByUs: false,
  taintedByUs: true,
  plugins: { nova: { disabledByUs: true, serviceId: 'svc-1', hostSeen: 'cmp-4' } },
  verifiedAt: '2026-01-01T01:00:00Z',
});

describe('records across drainer versions', () => {
  it('keeps fields it does not know, at the top and inside, on every write, and states its schema', async () => {
    const { cluster, reconciler, signal } = setup();
    const node = cluster.addNode('node-7', { unschedulable: true });
    node.metadata.annotations = {
      [STATE_ANNOTATION]: JSON.stringify({
        phase: 'Evacuating',
        trigger: 'cordon',
        since: '2026-01-01T00:00:00Z',
        plugins: { nova: { serviceId: 'svc-1', hostSeen: 'cmp-4' } },
        drain: { succeeded: false, total: 0, evicted: 0, ignored: 0, failed: [], gateHeld: true },
        verifiedAt: '2026-01-01T01:00:00Z',
      }),
    };

    await reconciler.reconcile('node-7', signal);

    const raw = JSON.parse(node.metadata.annotations[STATE_ANNOTATION] ?? '{}') as Record<string, unknown>;
    expect(raw).toMatchObject({
      schemaVersion: RECORD_SCHEMA,
      phase: 'Evacuated',
      verifiedAt: '2026-01-01T01:00:00Z',
      plugins: { nova: { serviceId: 'svc-1', hostSeen: 'cmp-4', disabledByUs: true } },
    });
  });

  it('after a rollback: leaves a record with an unknown phase untouched, restores nothing, and says how out', async () => {
    const { cluster, host, reconciler, restored, unreadable, signal } = setup();
    const node = cluster.addNode('node-7');
    node.metadata.annotations = { [STATE_ANNOTATION]: fromTheFuture };

    // uncordoned: today's code would restore an empty record, delete it and claim RestoreSucceeded
    await reconciler.reconcile('node-7', signal);
    node.spec.unschedulable = true;
    await reconciler.reconcile('node-7', signal);

    expect(node.metadata.annotations[STATE_ANNOTATION]).toBe(fromTheFuture);
    expect(cluster.writes).toEqual([]);
    expect(restored).toEqual([]);
    expect(host.evacuateCalls).toBe(0);
    expect(cluster.reasons()).toEqual(['RecordUnreadable', 'RecordUnreadable']);
    const message = cluster.events[0]?.message ?? '';
    expect(message).toContain('phase');
    expect(message).toContain('drainer restore --node node-7 --force');
    expect(unreadable).toEqual([true, true]);
  });

  it('refuses a record of a newer schema, and bad JSON, the same way', async () => {
    const { cluster, reconciler, signal } = setup();
    const newer = JSON.stringify({
      schemaVersion: RECORD_SCHEMA + 1,
      phase: 'Evacuated',
      trigger: 'cordon',
      since: 'x',
    });
    cluster.addNode('node-7', { unschedulable: true }).metadata.annotations = { [STATE_ANNOTATION]: newer };
    cluster.addNode('node-8', { unschedulable: true }).metadata.annotations = {
      [STATE_ANNOTATION]: '{"phase":',
    };

    await reconciler.reconcile('node-7', signal);
    await reconciler.reconcile('node-8', signal);

    expect(cluster.writes).toEqual([]);
    expect(cluster.events.map((e) => e.message)).toEqual([
      expect.stringContaining(`written by a newer drainer (schema ${RECORD_SCHEMA + 1}`),
      expect.stringContaining('not JSON'),
    ]);
  });

  it('restore refuses an unreadable record without --force, naming the way out', async () => {
    const { cluster, reconciler, restored, signal } = setup();
    cluster.addNode('node-7').metadata.annotations = { [STATE_ANNOTATION]: fromTheFuture };

    await expect(reconciler.restoreNow('node-7', signal)).rejects.toThrow(RecordUnreadableError);
    await expect(reconciler.restoreNow('node-7', signal)).rejects.toThrow(/--force/);
    expect(restored).toEqual([]);
    expect(cluster.writes).toEqual([]);
  });

  it('restore --force undoes what is recognisably ours, keeps the record aside, and says it was forced', async () => {
    const { cluster, reconciler, restored, unreadable, signal } = setup();
    const node = cluster.addNode('node-7');
    node.metadata.annotations = { [STATE_ANNOTATION]: fromTheFuture };
    node.spec.taints = [{ ...EVACUATING_TAINT }, { key: 'other', effect: 'NoSchedule' }];

    const results = await reconciler.restoreNow('node-7', signal, true);

    expect(results).toEqual([{ plugin: 'nova', ok: true }]);
    expect(restored).toEqual([undefined]); // the plugin's no-record path: it checks what it owns
    expect(node.spec.taints).toEqual([{ key: 'other', effect: 'NoSchedule' }]);
    expect(node.metadata.annotations[STATE_ANNOTATION]).toBeUndefined();
    expect(node.metadata.annotations[UNREADABLE_ANNOTATION]).toBe(fromTheFuture);
    expect(cluster.reasons()).toEqual(['RestoreForced']);
    expect(unreadable).toEqual([false]);
  });

  it('a forced restore that did not happen keeps the record and sends no success Event', async () => {
    const { cluster, reconciler, signal } = setup(true);
    const node = cluster.addNode('node-7');
    node.metadata.annotations = { [STATE_ANNOTATION]: fromTheFuture };

    await expect(reconciler.restoreNow('node-7', signal, true)).rejects.toThrow(/incomplete/);

    expect(node.metadata.annotations[STATE_ANNOTATION]).toBe(fromTheFuture);
    expect(cluster.reasons()).toEqual([]);
  });

  it('with no record or an unreadable one, a node still cordoned is restored as still in maintenance, forced or not', async () => {
    const { cluster, host, reconciler, signal } = setup();
    const refs: (boolean | undefined)[] = [];
    const restore = host.restore.bind(host);
    host.restore = (node, opts) => (refs.push(node.inMaintenance), restore(node, opts));
    cluster.addNode('node-7', { unschedulable: true }).metadata.annotations = {
      [STATE_ANNOTATION]: fromTheFuture,
    };
    cluster.addNode('node-8', { unschedulable: true });
    cluster.addNode('node-9');

    await reconciler.restoreNow('node-7', signal, true);
    await reconciler.restoreNow('node-8', signal, true);
    await reconciler.restoreNow('node-8', signal);
    await reconciler.restoreNow('node-9', signal, true);

    // the plugins keep what they stopped stopped, and their disables disabled, on the cordoned ones
    expect(refs).toEqual([true, true, true, undefined]);
    expect(cluster.events.map((e) => [e.type, e.message])).toEqual([
      [
        'Warning',
        expect.stringMatching(/^node node-7: forced restore .*, but still to be evacuated \(cordon; /),
      ],
      [
        'Warning',
        expect.stringMatching(/^node node-8: forced restore .*, but still to be evacuated \(cordon; /),
      ],
      ['Normal', expect.not.stringContaining('still to be evacuated')],
    ]);
  });
});
