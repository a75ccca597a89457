// The soak's record of the fleet queue on the API server's clock: queue spans from the label's
// writes, slot spans from the Leases' holders, renewals as the holder's own writes.
import { describe, expect, it } from 'vitest';
import { QueueWatch, type QueueSource } from '../../bench/chaos/queue-watch.ts';

function fakeSource() {
  let now = 0;
  const subs = new Map<string, (type: string, obj: never) => void>();
  const source: QueueSource = {
    subscribe: (res, cb) => {
      subs.set(res, cb);
      return () => subs.delete(res);
    },
    now: () => now,
  };
  return {
    source,
    at: (t: number) => (now = t),
    node: (name: string, queued?: string, type = 'MODIFIED') =>
      subs.get('nodes')?.(type, {
        metadata: { name, labels: queued ? { 'drainer.dev/queued': queued } : {} },
      } as never),
    lease: (name: string, holder?: string) =>
      subs.get('leases.coordination.k8s.io')?.('MODIFIED', {
        metadata: { name },
        spec: holder ? { holderIdentity: holder } : {},
      } as never),
  };
}

describe('the fleet queue as the API server saw it', () => {
  it('a span per stay in the queue; a label put back with its value keeps the first place', () => {
    const f = fakeSource();
    const w = new QueueWatch(f.source, { staleMs: 60_000 });
    f.at(100);
    f.node('a', '111');
    f.at(200);
    f.node('a', '111'); // another write of the Node: no change
    f.node('b', '222');
    f.at(300);
    f.node('a');
    f.at(400);
    f.node('a', '111'); // resumed: queued again with its old place
    f.at(500);
    f.node('b', undefined, 'DELETED');
    expect(w.queue.queued).toEqual([
      { node: 'a', from: 100, until: 300 },
      { node: 'b', from: 200, until: 500 },
      { node: 'a', from: 100, since: 400 },
    ]);
  });

  it('a span per holder of each slot, its renewals, a takeover ending the last one', () => {
    const f = fakeSource();
    const w = new QueueWatch(f.source, { staleMs: 60_000 });
    f.at(100);
    f.lease('drainer-evacuation-0', 'a/pod-1/uid');
    f.at(150);
    f.lease('drainer-evacuation-0', 'a/pod-1/uid');
    f.at(200);
    f.lease('drainer-evacuation-0', 'b/pod-2/uid');
    f.at(300);
    f.lease('drainer-evacuation-0');
    f.lease('drainer-node-a', 'a/pod-1/uid'); // an agent's own Lease: no slot
    expect(w.queue.slots).toEqual([
      { node: 'a', slot: 'drainer-evacuation-0', from: 100, renewedAt: 150, until: 200 },
      { node: 'b', slot: 'drainer-evacuation-0', from: 200, until: 300 },
    ]);
    expect(w.queue.staleMs).toBe(60_000);
  });

  it('says how long a second of the Date header is on its clock (the soak runs 20 times faster)', () => {
    const w = new QueueWatch(fakeSource().source, { staleMs: 60_000, resolutionMs: 20_000 });
    expect(w.queue.resolutionMs).toBe(20_000);
  });
});
