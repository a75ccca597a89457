// Story: how a waiter learns who is ahead of it in the fleet queue (issue 38; queue-read.ts). In a long queue it
// reads the nodes queued just before it, from the API server's cache, widening the window until it
// holds more than a page; a queue of a page or fewer is read whole. A waiter that likely has few
// ahead reads the page from etcd first, and the windows only when the page shows a longer queue
// (issue 51). A node held at the start gate keeps its place but is ahead of nobody.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubeFleetApi } from '../../src/core/fleet/kube-port.ts';
import { newRecord, serializeRecord, STATE_ANNOTATION } from '../../src/core/record/record.ts';
import { queueNode, queueReadsSince, startFleetFixture, type KubeFixture } from '../kube/sandbox.ts';
import { quietLogger } from './fakes.ts';

const T = 1_764_000_000_000;
let fx: KubeFixture;
beforeEach(async () => {
  fx = await startFleetFixture(['a', 'b', 'c', 'd', 'e', 'me', 'z']);
});
afterEach(() => fx.close());

const api = () => kubeFleetApi({ k: fx.k, namespace: 'drainer', daemonSet: 'drainer', log: quietLogger() });
/** The queue reads the port made, as label selectors, and whether each came from the cache. */
const queueReads = (from: number) => queueReadsSince(fx, from);

/** A short queue: a queued a minute before this node ('me'), b 0.2 s before. */
async function queueTwoAhead() {
  await queueNode(fx, 'a', T - 60_000);
  await queueNode(fx, 'b', T - 200);
  await queueNode(fx, 'me', T);
}

/** A queue filled over a few seconds: a, b, c queued 3, 2.5 and 2 s before this node; d 0.5 s before. */
async function queueFourInSeconds() {
  for (const [n, ago] of [
    ['a', 3000],
    ['b', 2500],
    ['c', 2000],
    ['d', 500],
  ] as const)
    await queueNode(fx, n, T - ago);
  await queueNode(fx, 'me', T);
}

/** The node's record says it waits at the start gate (a window, here): it keeps its place. */
async function holdAtGate(n: string) {
  await fx.k.request({
    method: 'PATCH',
    path: `/api/v1/nodes/${n}`,
    contentType: 'application/merge-patch+json',
    body: {
      metadata: {
        annotations: {
          [STATE_ANNOTATION]: serializeRecord({
            ...newRecord('cordon', new Date(T)),
            phase: 'Queued',
            waiting: {
              kind: 'window',
              reason: 'outside the maintenance window',
              since: new Date(T).toISOString(),
            },
          }),
        },
      },
    },
  });
}

describe('a queue that filled over a few seconds', () => {
  it('widens the window to 4 s once the last second and a page from etcd show more than a page ahead', async () => {
    await queueNode(fx, 'e', T + 100); // after: not ahead
    await queueFourInSeconds();
    const from = fx.server.requestLog.length;

    const r = await api().queuedAhead({ node: 'me', since: T, want: 2 });

    expect({ nodes: [...r.nodes].sort(), more: r.more }).toEqual({ nodes: ['a', 'b', 'c', 'd'], more: true });
    expect(queueReads(from)).toEqual([
      { selector: `drainer.dev/queued>${T - 1000},drainer.dev/queued<${T + 1}`, cached: true, limit: null },
      { selector: `drainer.dev/queued<${T + 1}`, cached: false, limit: '4' },
      { selector: `drainer.dev/queued>${T - 4000},drainer.dev/queued<${T + 1}`, cached: true, limit: null },
    ]);
  });
});

describe('a queue of a page or fewer', () => {
  it('is read whole: one window, one page from etcd that ends, nothing more', async () => {
    await queueTwoAhead();
    const from = fx.server.requestLog.length;

    const r = await api().queuedAhead({ node: 'me', since: T, want: 2 });

    expect({ nodes: [...r.nodes].sort(), more: r.more }).toEqual({ nodes: ['a', 'b'], more: false });
    expect(queueReads(from).map((x) => x.limit)).toEqual([null, '4']);
  });
});

describe('the same queued time', () => {
  it('puts the smaller name ahead, and a node held at the start gate ahead of nobody', async () => {
    await queueNode(fx, 'a', T);
    await queueNode(fx, 'b', T - 100);
    await queueNode(fx, 'z', T);
    await holdAtGate('b');
    await queueNode(fx, 'me', T);

    // without a page: every node ahead, read once from the cache
    const r = await api().queuedAhead({ node: 'me', since: T });

    expect(r).toEqual({ nodes: ['a'], more: false });
  });
});

describe('a page filled by nodes that are not ahead', () => {
  it('reads the rest from the cache at once, not window after window', async () => {
    // a page of want + 2 = 3: a (ahead), b (held at the gate) and this node; Nodes are left unread,
    // so the API server gives a continue token, though none of them is queued
    await queueNode(fx, 'a', T - 100);
    await queueNode(fx, 'b', T - 50);
    await holdAtGate('b');
    await queueNode(fx, 'me', T);
    const from = fx.server.requestLog.length;

    const r = await api().queuedAhead({ node: 'me', since: T, want: 1 });

    expect(r).toEqual({ nodes: ['a'], more: false });
    expect(queueReads(from).map((x) => [x.cached, x.limit])).toEqual([
      [true, null],
      [false, '3'],
      [true, null],
    ]);
  });
});

describe('a waiter that found a slot free when it queued (few are likely ahead)', () => {
  it('reads a page from etcd first: a queue of a page or fewer costs that one read', async () => {
    await queueTwoAhead();
    const from = fx.server.requestLog.length;

    const r = await api().queuedAhead({ node: 'me', since: T, want: 2, fewAhead: true });

    expect({ nodes: [...r.nodes].sort(), more: r.more }).toEqual({ nodes: ['a', 'b'], more: false });
    expect(queueReads(from)).toEqual([
      { selector: `drainer.dev/queued<${T + 1}`, cached: false, limit: '4' },
    ]);
  });

  it('reads the nodes queued just before it, window after window, once the page shows a longer queue', async () => {
    await queueFourInSeconds();
    const from = fx.server.requestLog.length;

    const r = await api().queuedAhead({ node: 'me', since: T, want: 2, fewAhead: true });

    expect({ nodes: [...r.nodes].sort(), more: r.more }).toEqual({ nodes: ['a', 'b', 'c', 'd'], more: true });
    expect(queueReads(from)).toEqual([
      { selector: `drainer.dev/queued<${T + 1}`, cached: false, limit: '4' },
      { selector: `drainer.dev/queued>${T - 1000},drainer.dev/queued<${T + 1}`, cached: true, limit: null },
      { selector: `drainer.dev/queued>${T - 4000},drainer.dev/queued<${T + 1}`, cached: true, limit: null },
    ]);
  });
});
