// Story: an agent restarts (a DaemonSet rollout) after its evacuation's plugins had moved every VM
// and while it drained the node's pods: the record says Evacuating, with outcomes that say all
// moved. Servers can land on the host after those outcomes (migrations scheduled into it before it
// was disabled). The new agent resumes: the outcomes it read are an earlier run's, so the gate holds
// until its own plugins have looked again and moved what they found.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { DrainGate } from '../../src/core/gate/gate.ts';
import { newRecord, STATE_ANNOTATION, type NodeRecord } from '../../src/core/record/record.ts';
import { gateName } from '../../src/kube/gate.ts';
import { FakeCluster, FakeHost, quietLogger, succeeded } from './fakes.ts';
import { FakeGateApi } from './fake-gate.ts';

const NODE = 'node-7';

describe('a resumed evacuation and the drain gate', () => {
  it("an earlier run's outcomes open nothing: the gate holds while this run moves what landed since", async () => {
    const cluster = new FakeCluster();
    const api = new FakeGateApi();
    const log = quietLogger();
    const gate = new DrainGate({
      api,
      log,
      podOf: (n) => ({ namespace: 'drainer', name: gateName(n) }),
      retry: { initialMs: 5, maxMs: 20 },
    });
    let guardedWhileMoving: boolean | undefined;
    let callsBeforeMoving: string[] = [];
    const host = new FakeHost([
      {
        name: 'nova',
        evacuate: async () => {
          callsBeforeMoving = [...api.calls];
          await new Promise((r) => setTimeout(r, 30));
          guardedWhileMoving = api.guards(NODE);
          return succeeded('nova', ['arrived-since']);
        },
      },
    ]);
    const config = configSchema.parse({});
    const reconciler = new Reconciler({ cluster, host, config, log, gate });
    const earlier: NodeRecord = {
      ...newRecord('cordon', new Date('2026-03-01T00:00:00Z')),
      phase: 'Evacuating',
      outcomes: [{ plugin: 'nova', succeeded: true, moved: 3, failed: 0 }],
    };
    cluster.addNode(NODE, { unschedulable: true }).metadata.annotations = {
      [STATE_ANNOTATION]: JSON.stringify(earlier),
    };
    await gate.set(NODE, true); // the earlier agent held it, and released it no more

    await reconciler.reconcile(NODE, new AbortController().signal);

    // not even for a moment: a drain that saw the gate pod go would have gone on
    expect(callsBeforeMoving).not.toContain(`release ${NODE}`);
    expect(guardedWhileMoving).toBe(true);
    expect(cluster.record(NODE)?.phase).toBe('Evacuated');
  });
});
