import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventRecorder } from '../../src/kube/events.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { silentLog } from './helpers.ts';
import { startFixture, type KubeFixture } from './sandbox.ts';

let f: KubeFixture;
let clock: number;
let recorder: EventRecorder;
beforeEach(async () => {
  f = await startFixture();
  clock = Date.parse('2030-01-01T00:00:00Z');
  recorder = new EventRecorder({ k: f.k, log: silentLog(), host: 'n1', now: () => new Date(clock) });
});
afterEach(() => f.close());

const nodeRef = { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'u-1' };
const events = (ns = 'default') => f.server.store.list('events', { namespace: ns }) as KubeObject[];

describe('EventRecorder', () => {
  it('puts Events of cluster-scoped objects in namespace default, from component drainer', async () => {
    await recorder.record(nodeRef, 'Normal', 'EvacuationStarted', 'evacuating n1');
    const [ev] = events();
    expect(ev).toMatchObject({
      reason: 'EvacuationStarted',
      type: 'Normal',
      message: 'evacuating n1',
      count: 1,
      involvedObject: { kind: 'Node', name: 'n1', uid: 'u-1' },
      source: { component: 'drainer', host: 'n1' },
      reportingComponent: 'drainer',
    });
  });

  it('aggregates repeats into one Event with a count and the last timestamp', async () => {
    await recorder.record(nodeRef, 'Warning', 'EvictionBlocked', 'pdb says no');
    clock += 5000;
    await Promise.all([
      recorder.record(nodeRef, 'Warning', 'EvictionBlocked', 'pdb says no'),
      recorder.record(nodeRef, 'Warning', 'EvictionBlocked', 'pdb says no'),
    ]);
    await recorder.record(nodeRef, 'Warning', 'EvictionBlocked', 'another message');

    const blocked = events().filter((e) => e.message === 'pdb says no');
    expect(blocked).toHaveLength(1);
    expect(blocked[0]).toMatchObject({
      count: 3,
      // metav1.Time: the API server keeps whole seconds
      firstTimestamp: '2030-01-01T00:00:00Z',
      lastTimestamp: '2030-01-01T00:00:05Z',
    });
    expect(events()).toHaveLength(2);
  });

  it('puts Events of namespaced objects in their namespace', async () => {
    await recorder.record(
      { apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'kube-system' },
      'Warning',
      'EvictionBlocked',
      'x',
    );
    expect(events('kube-system')).toHaveLength(1);
  });

  it('never throws when the API refuses', async () => {
    f.server.faults.failRequests({ status: 503, forMs: 60_000, match: /events/ });
    await expect(recorder.record(nodeRef, 'Normal', 'DrainStarted', 'x')).resolves.toBeUndefined();
  });
});
