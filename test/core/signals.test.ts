// Issue 23 item 8 (core): signals that do not mislead. A failed evacuation backs off, doubling up
// to an hour, and its Event says when the next try is; a cancel that races the end ends as a
// cancel; a lost fleet slot is logged as a lost slot.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import type { NodeChange } from '../../src/core/cluster/cluster.ts';
import type { EvacuationBudget, Slot } from '../../src/core/fleet/types.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { STATE_ANNOTATION } from '../../src/core/record/record.ts';
import {
  captureLogger,
  failedOne,
  FakeCluster,
  FakeHost,
  quietLogger,
  succeeded,
  type FakePlugin,
} from './fakes.ts';

const failing: FakePlugin = {
  name: 'nova',
  evacuate: async () => failedOne('nova', 'No valid host was found'),
};

describe('a failed evacuation backs off', () => {
  it('retries after one resync, then two, then four …, never more than an hour, and the Event says when', async () => {
    const cluster = new FakeCluster();
    const host = new FakeHost([failing]);
    let now = Date.parse('2026-01-01T00:00:00Z');
    const config = configSchema.parse({ resyncInterval: 60 });
    const reconciler = new Reconciler({
      cluster,
      host,
      config,
      log: quietLogger(),
      now: () => new Date(now),
    });
    const signal = new AbortController().signal;
    cluster.addNode('node-7', { unschedulable: true });

    const first = await reconciler.reconcile('node-7', signal);
    expect(host.evacuateCalls).toBe(1);
    expect(first.requeueAfterMs).toBe(60_000);
    expect(cluster.events.at(-1)?.message).toMatch(/next try at 2026-01-01T00:01:00.000Z \(in 60 s\)$/);

    now += 60_000;
    expect((await reconciler.reconcile('node-7', signal)).requeueAfterMs).toBe(120_000);
    expect(host.evacuateCalls).toBe(2);

    now += 119_000; // a resync (or a write of our own) before the doubled wait tries nothing
    expect((await reconciler.reconcile('node-7', signal)).requeueAfterMs).toBe(1000);
    expect(host.evacuateCalls).toBe(2);

    now += 1000;
    await reconciler.reconcile('node-7', signal);
    expect(host.evacuateCalls).toBe(3);
    expect(cluster.events.at(-1)?.message).toContain('(in 240 s)');
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Failed', failures: 3 });

    // many failures later: the wait stops at an hour
    const rec = JSON.parse(cluster.node('node-7').metadata.annotations?.[STATE_ANNOTATION] ?? '{}');
    cluster.node('node-7').metadata.annotations = {
      [STATE_ANNOTATION]: JSON.stringify({ ...rec, failures: 12, attemptedAt: new Date(now).toISOString() }),
    };
    expect((await reconciler.reconcile('node-7', signal)).requeueAfterMs).toBe(3600_000);
  });
});

/** Cancels the evacuation while the record of the plugins' outcomes is being written: the end is raced. */
class RacingCluster extends FakeCluster {
  cancel: () => void = () => undefined;
  override async setNodeAnnotation(
    node: string,
    key: string,
    value: string | null,
    labels?: Record<string, string | null>,
    change?: NodeChange,
    guard?: { resourceVersion: string },
  ) {
    if (value?.includes('"outcomes"') && !value.includes('"Evacuated"')) this.cancel();
    return super.setNodeAnnotation(node, key, value, labels, change, guard);
  }
}

describe('a cancel that races the end', () => {
  it('ends as a cancel: no Evacuated record, no EvacuationSucceeded, no Succeeded NodeMaintenance', async () => {
    const cluster = new RacingCluster();
    const host = new FakeHost([{ name: 'nova', evacuate: async () => succeeded('nova', ['vm-1']) }]);
    const config = configSchema.parse({ drain: { enabled: false }, nodeMaintenance: { mode: 'own' } });
    const reconciler = new Reconciler({ cluster, host, config, log: quietLogger() });
    cluster.cancel = () => reconciler.cancel('node-7', 'NodeMaintenance deleted');
    cluster.addNode('node-7');
    cluster.addMaintenance('nm-7', 'node-7');

    const result = await reconciler.reconcile('node-7', new AbortController().signal);

    expect(result.requeueAfterMs).toBe(0); // the next pass restores
    expect(cluster.record('node-7')?.phase).toBe('Evacuating');
    expect(cluster.reasons()).not.toContain('EvacuationSucceeded');
    expect(cluster.nm('nm-7').status?.phase).not.toBe('Succeeded');
  });
});

/** One slot, lost while the plugins run. */
class LosingBudget implements EvacuationBudget {
  readonly lose = new AbortController();
  async acquire(): Promise<Slot> {
    return {
      name: 'drainer-evacuation-0',
      lost: this.lose.signal,
      release: async () => undefined,
      abandon: () => undefined,
    };
  }
}

describe('a lost fleet slot', () => {
  it('is logged as a lost slot, not as a shutdown', async () => {
    const cluster = new FakeCluster();
    const budget = new LosingBudget();
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: async (ctx) => {
          budget.lose.abort();
          await new Promise((r) => setTimeout(r, 0));
          if (ctx.signal.aborted) throw ctx.signal.reason;
          return succeeded('nova');
        },
      },
    ]);
    const { log, lines } = captureLogger();
    const config = configSchema.parse({});
    const reconciler = new Reconciler({ cluster, host, config, log, budget });
    cluster.addNode('node-7', { unschedulable: true });

    const result = await reconciler.reconcile('node-7', new AbortController().signal);

    expect(result.requeueAfterMs).toBe(0);
    const text = lines.join('\n');
    expect(text).toContain('lost the fleet slot');
    expect(text).not.toContain('interrupted by shutdown');
  });
});
