// An operator's release and a forced restore belong to one maintenance: the release opens the
// gate of the record it was given for and of no other, a restore takes it back before the node
// takes VMs again, and nothing (a leftover annotation, a stale read of the Node) opens it later.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { DrainGate } from '../../src/core/gate/gate.ts';
import { gateHeld } from '../../src/core/gate/step.ts';
import { newRecord, STATE_ANNOTATION, type NodeRecord } from '../../src/core/record/record.ts';
import { GATE_RELEASED_ANNOTATION, gateName } from '../../src/kube/gate.ts';
import {
  failedAfterChanges,
  FakeCluster,
  FakeHost,
  quietLogger,
  succeeded,
  type FakePlugin,
} from './fakes.ts';
import { FakeGateApi } from './fake-gate.ts';

const NODE = 'node-7';
const signal = new AbortController().signal;

function setup(plugins: FakePlugin[]) {
  const cluster = new FakeCluster();
  const api = new FakeGateApi();
  const log = quietLogger();
  const gate = new DrainGate({
    api,
    log,
    podOf: (n) => ({ namespace: 'drainer', name: gateName(n) }),
    retry: { initialMs: 5, maxMs: 20 },
  });
  const config = configSchema.parse({ drainGate: { holdTimeout: 5 } });
  const reconciler = new Reconciler({ cluster, host: new FakeHost(plugins), config, log, gate });
  return { cluster, api, gate, reconciler };
}

const nodeWith = (annotations: Record<string, string>) => ({ metadata: { name: NODE, annotations } });
const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

/** A nova plugin that notes the gate's calls before it moves the server, and whether the gate guards while it does. */
function setupWatchingTheGate(server: string) {
  const moving: { callsBefore: string[]; guarded?: boolean } = { callsBefore: [] };
  const s = setup([
    {
      name: 'nova',
      evacuate: async () => {
        moving.callsBefore = [...s.api.calls];
        await tick();
        moving.guarded = s.api.guards(NODE);
        return succeeded('nova', [server]);
      },
    },
  ]);
  return { ...s, moving };
}

describe("an operator's release belongs to one maintenance", () => {
  const record: NodeRecord = { ...newRecord('cordon', new Date('2026-03-01T00:00:00Z')), phase: 'Failed' };

  it('a release left from an earlier maintenance does not open the gate of this one', () => {
    // written by an older drainer (a time only), weeks before this record began
    expect(gateHeld(record, nodeWith({ [GATE_RELEASED_ANNOTATION]: '2026-01-01T00:00:00.000Z' }))).toBe(true);
    // bound to another record
    const other = JSON.stringify({ at: '2026-03-02T00:00:00.000Z', record: 'another-maintenance' });
    expect(gateHeld(record, nodeWith({ [GATE_RELEASED_ANNOTATION]: other }))).toBe(true);
  });

  it('a release given for this record opens it, until the restore begins', () => {
    const mine = JSON.stringify({ at: '2026-03-02T00:00:00.000Z', record: record.id ?? record.since });
    expect(gateHeld(record, nodeWith({ [GATE_RELEASED_ANNOTATION]: mine }))).toBe(false);
    expect(gateHeld({ ...record, phase: 'Restoring' }, nodeWith({ [GATE_RELEASED_ANNOTATION]: mine }))).toBe(
      true,
    );
  });

  it('weeks later, a cordon with a leftover release: the gate holds while the VMs are on the host', async () => {
    const { cluster, gate, reconciler, moving } = setupWatchingTheGate('vm-1');
    const node = cluster.addNode(NODE, { unschedulable: true });
    node.metadata.annotations = { [GATE_RELEASED_ANNOTATION]: '2026-01-01T00:00:00.000Z' };
    await gate.set(NODE, true);

    await reconciler.reconcile(NODE, signal);

    expect(moving.guarded).toBe(true);
    // the leftover is taken off: nothing honours it, and nothing is left to mislead
    expect(cluster.node(NODE).metadata.annotations?.[GATE_RELEASED_ANNOTATION]).toBeUndefined();
    gate.stop();
  });

  it('restore --force holds the gate first and takes the release off', async () => {
    const order: string[] = [];
    const { cluster, api, gate, reconciler } = setup([
      {
        name: 'nova',
        evacuate: async () => succeeded('nova'),
        restore: async () => {
          order.push(`nova restored, gate guards: ${api.guards(NODE)}`);
        },
      },
    ]);
    const node = cluster.addNode(NODE);
    node.metadata.annotations = { [GATE_RELEASED_ANNOTATION]: '2026-01-01T00:00:00.000Z' };

    await reconciler.restoreNow(NODE, signal, true);

    expect(order).toEqual(['nova restored, gate guards: true']);
    expect(cluster.node(NODE).metadata.annotations?.[GATE_RELEASED_ANNOTATION]).toBeUndefined();
    gate.stop();
  });

  it('after drainer release, the restore never releases the gate again once nova-compute is enabled', async () => {
    const { cluster, api, gate, reconciler } = setup([
      {
        name: 'nova',
        evacuate: async () => succeeded('nova'),
        restore: async ({ save }) => {
          api.calls.push('nova-compute enabled');
          // the plugin's record is written after the service is enabled: a write of the record
          await save({ host: 'compute-7', disabledByUs: false });
        },
      },
    ]);
    const rec = { ...failedAfterChanges(), id: 'maintenance-1' };
    const node = cluster.addNode(NODE);
    node.metadata.annotations = {
      [STATE_ANNOTATION]: JSON.stringify(rec),
      [GATE_RELEASED_ANNOTATION]: JSON.stringify({ at: new Date().toISOString(), record: 'maintenance-1' }),
    };

    await reconciler.reconcile(NODE, signal);
    await tick();

    expect(cluster.record(NODE)).toBeUndefined();
    const enabled = api.calls.indexOf('nova-compute enabled');
    expect(enabled).toBeGreaterThan(-1);
    expect(api.calls.slice(enabled)).not.toContain(`release ${NODE}`);
    expect(api.guards(NODE)).toBe(true);
    gate.stop();
  });

  // chaos seed 3 round 37: released with servers on the host, uncordoned (the restore began, the
  // release still on the Node until it ends), then drained again before the restore ended
  it('a node drained again while its restore runs: the release of the ended maintenance opens nothing', async () => {
    const { cluster, gate, reconciler, moving } = setupWatchingTheGate('left-by-the-release');
    const restoring: NodeRecord = { ...failedAfterChanges(), id: 'maintenance-1', phase: 'Restoring' };
    cluster.addNode(NODE, { unschedulable: true }).metadata.annotations = {
      [STATE_ANNOTATION]: JSON.stringify(restoring),
      [GATE_RELEASED_ANNOTATION]: JSON.stringify({ at: new Date().toISOString(), record: 'maintenance-1' }),
    };
    await gate.set(NODE, true); // the restore held it again

    await reconciler.reconcile(NODE, signal);

    expect(moving.callsBefore).not.toContain(`release ${NODE}`);
    expect(moving.guarded).toBe(true);
    expect(cluster.record(NODE)?.id).not.toBe('maintenance-1');
    gate.stop();
  });
});

// An agent restarts (a DaemonSet rollout) after its evacuation's plugins had moved every VM and while
// it drained the node's pods: the record says Evacuating, with outcomes that say all moved. Servers
// can land on the host after those outcomes (migrations scheduled into it before it was disabled).
describe('a resumed evacuation and the drain gate', () => {
  it("an earlier run's outcomes open nothing: the gate holds while this run moves what landed since", async () => {
    const { cluster, gate, reconciler, moving } = setupWatchingTheGate('arrived-since');
    const earlier: NodeRecord = {
      ...newRecord('cordon', new Date('2026-03-01T00:00:00Z')),
      phase: 'Evacuating',
      outcomes: [{ plugin: 'nova', succeeded: true, moved: 3, failed: 0 }],
    };
    cluster.addNode(NODE, { unschedulable: true }).metadata.annotations = {
      [STATE_ANNOTATION]: JSON.stringify(earlier),
    };
    await gate.set(NODE, true); // the earlier agent held it, and released it no more

    await reconciler.reconcile(NODE, signal);

    // not even for a moment: a drain that saw the gate pod go would have gone on
    expect(moving.callsBefore).not.toContain(`release ${NODE}`);
    expect(moving.guarded).toBe(true);
    expect(cluster.record(NODE)?.phase).toBe('Evacuated');
  });
});
