// `drainer start --now` belongs to one maintenance: it starts the record it was given for (or the
// next one, asked while the node was in service), is taken off once honoured or moot, and never
// survives an uncordon to let a later cordon past a freeze.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { START_NOW_ANNOTATION, startNowAsked } from '../../src/core/fleet/start-now.ts';
import { newRecord, STATE_ANNOTATION, type NodeRecord } from '../../src/core/record/record.ts';
import { FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';

const NODE = 'node-7';
const signal = new AbortController().signal;
const asked = (more: object = {}) =>
  JSON.stringify({ by: 'alice@ops', at: '2026-03-01T10:00:00.000Z', ...more });

function setup(record: NodeRecord | undefined, opts: { cordoned: boolean; startNow: string }) {
  const cluster = new FakeCluster();
  const node = cluster.addNode(NODE, { unschedulable: opts.cordoned });
  node.metadata.annotations = {
    [START_NOW_ANNOTATION]: opts.startNow,
    ...(record ? { [STATE_ANNOTATION]: JSON.stringify(record) } : {}),
  };
  const host = new FakeHost([{ name: 'nova', evacuate: async () => succeeded('nova') }]);
  const reconciler = new Reconciler({ cluster, host, config: configSchema.parse({}), log: quietLogger() });
  return { cluster, reconcile: () => reconciler.reconcile(NODE, signal) };
}

const evacuated: NodeRecord = {
  ...newRecord('cordon', new Date('2026-03-01T09:00:00Z')),
  phase: 'Evacuated',
  outcomes: [{ plugin: 'nova', succeeded: true, moved: 1, failed: 0 }],
};

describe('start-now belongs to one maintenance', () => {
  it('a second start --now while the node is already evacuated is taken off (nothing is left to start)', async () => {
    const { cluster, reconcile } = setup(evacuated, { cordoned: true, startNow: asked() });
    await reconcile();
    expect(cluster.record(NODE)?.phase).toBe('Evacuated');
    expect(cluster.node(NODE).metadata.annotations?.[START_NOW_ANNOTATION]).toBeUndefined();
  });

  it('it does not survive the uncordon', async () => {
    const { cluster, reconcile } = setup(evacuated, { cordoned: false, startNow: asked() });
    await reconcile();
    expect(cluster.record(NODE)).toBeUndefined();
    expect(cluster.node(NODE).metadata.annotations?.[START_NOW_ANNOTATION]).toBeUndefined();
  });

  it('one left on a node in service (an older agent) is taken off at the next pass', async () => {
    const { cluster, reconcile } = setup(undefined, { cordoned: false, startNow: asked() });
    await reconcile();
    expect(cluster.node(NODE).metadata.annotations?.[START_NOW_ANNOTATION]).toBeUndefined();
  });

  it('one given for another record starts nothing', () => {
    const queued: NodeRecord = { ...newRecord('cordon', new Date('2026-04-01T00:00:00Z')), phase: 'Queued' };
    const node = (v: string) => ({ metadata: { name: NODE, annotations: { [START_NOW_ANNOTATION]: v } } });
    const now = new Date('2026-04-01T00:01:00Z');
    expect(
      startNowAsked(node(asked({ record: 'an-earlier-maintenance' })), undefined, now, queued),
    ).toBeUndefined();
    expect(startNowAsked(node(asked({ record: queued.id })), undefined, now, queued)?.by).toBe('alice@ops');
    // asked while the node was in service: the next record it is
    expect(startNowAsked(node(asked()), undefined, now, queued)?.by).toBe('alice@ops');
  });
});
