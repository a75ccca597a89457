// Story (chaos seed 777001, budget-exceeded): the operator takes drainer's agent off a node in the
// middle of its evacuation (drainer.dev/agent=disabled). No agent will go on with it, yet its record
// said Evacuating for good: once its slot Lease ran out the next nodes took the slots, and status
// showed three nodes Evacuating under a budget of two. The stopping agent, told that no successor
// comes, ends the record's Evacuating: Failed, saying why, with what drainer changed kept for the
// agent that is put back (it resumes).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endEvacuationForGood } from '../../src/core/agent/left-for-good.ts';
import { attemptRecord } from '../../src/core/evacuation/attempt.ts';
import { kubeCluster } from '../../src/core/cluster/kube-cluster.ts';
import { configSchema } from '../../src/config/schema.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import {
  newRecord,
  parseRecord,
  QUEUED_LABEL,
  serializeRecord,
  STATE_ANNOTATION,
  type NodeRecord,
} from '../../src/core/record/record.ts';
import { node, startFixture, type KubeFixture } from '../kube/sandbox.ts';
import { quietLogger } from './fakes.ts';

let f: KubeFixture;
beforeEach(async () => {
  f = await startFixture();
});
afterEach(() => f.close());

async function stopForGood(
  record: NodeRecord,
  labels: Record<string, string> = {},
): Promise<NodeRecord | undefined> {
  f.server.store.create('nodes', {
    ...node('node-1'),
    metadata: { name: 'node-1', labels, annotations: { [STATE_ANNOTATION]: serializeRecord(record) } },
    spec: { unschedulable: true },
  });
  const log = quietLogger();
  const events = new EventRecorder({ k: f.k, log, host: 'node-1' });
  const config = configSchema.parse({});
  const cluster = kubeCluster({ k: f.k, events, drain: config.drain, log });
  await endEvacuationForGood({ cluster, nodeName: 'node-1', log, now: () => new Date() });
  const n = f.server.store.get('nodes', undefined, 'node-1');
  return parseRecord(n.metadata.annotations?.[STATE_ANNOTATION]);
}

describe('an agent that stops for good in the middle of an evacuation', () => {
  it('leaves the record Failed, not Evacuating, with what drainer changed and the slot no longer named', async () => {
    const evacuating: NodeRecord = {
      ...newRecord('cordon', new Date()),
      phase: 'Evacuating',
      slot: 'drainer-evacuation-0',
      plugins: { nova: { disabledByUs: true } },
    };

    const rec = await stopForGood(evacuating);

    expect(rec?.phase).toBe('Failed');
    expect(rec?.slot).toBeUndefined();
    expect(rec?.lastError).toMatch(/agent stopped for good/);
    expect(rec?.plugins).toEqual({ nova: { disabledByUs: true } });
  });

  it('takes a Queued record out of the fleet queue: Failed, its label off, its place kept for the agent put back', async () => {
    // chaos seed 13 round 19-20: two nodes whose agents were taken off while they queued kept
    // drainer.dev/queued; the waiters behind them waited a lease duration for nodes nobody would start
    const place = Date.parse('2026-11-28T13:46:26.693Z');
    const queued: NodeRecord = {
      ...newRecord('Machine/fleet/blade-2-m7', new Date()),
      phase: 'Queued',
      queuedAt: new Date(place).toISOString(),
      queueStamp: place,
      // queued again after an error while it evacuated: it had begun
      resumes: true,
      plugins: { nova: { disabledByUs: true } },
    };

    const rec = await stopForGood(queued, { [QUEUED_LABEL]: String(place) });

    expect(rec?.phase).toBe('Failed');
    expect(rec?.lastError).toMatch(/agent stopped for good while the node queued for a fleet slot/);
    expect(f.server.store.get('nodes', undefined, 'node-1').metadata.labels?.[QUEUED_LABEL]).toBeUndefined();
    // the agent put back tries the same evacuation again, in its old place
    expect(attemptRecord(rec, rec!.trigger, new Date(), true)).toMatchObject({
      phase: 'Queued',
      queueStamp: place,
      plugins: { nova: { disabledByUs: true } },
    });
  });

  it('leaves any other record as it is (Evacuated)', async () => {
    const evacuated: NodeRecord = { ...newRecord('cordon', new Date()), phase: 'Evacuated' };

    const rec = await stopForGood(evacuated);

    expect(rec?.phase).toBe('Evacuated');
  });
});
