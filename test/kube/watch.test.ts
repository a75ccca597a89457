import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runWatch, type WatchEventType } from '../../src/kube/watch.ts';
import type { KubeObject } from '../../src/kube/types.ts';
import { silentLog, until } from './helpers.ts';
import { node, startFixture, type KubeFixture } from './sandbox.ts';

let f: KubeFixture;
let stop: AbortController;
let running: Promise<void>;
let seen: string[];
let syncs: number;

beforeEach(async () => {
  f = await startFixture();
  stop = new AbortController();
  seen = [];
  syncs = 0;
});
afterEach(async () => {
  stop.abort();
  await running;
  await f.close();
});

function watchNodes(extra: { pageSize?: number; watchFirst?: boolean; onOpen?: () => void } = {}): void {
  running = runWatch({
    k: f.k,
    path: '/api/v1/nodes',
    onEvent: (type: WatchEventType, obj: KubeObject) => seen.push(`${type} ${obj.metadata.name}`),
    onSynced: () => syncs++,
    signal: stop.signal,
    log: silentLog(),
    backoff: { initialMs: 10, maxMs: 50 },
    ...extra,
  });
}

const lists = () =>
  f.server.requestLog.filter(
    (r) => r.method === 'GET' && r.path.startsWith('/api/v1/nodes') && !r.path.includes('watch'),
  ).length;

describe('runWatch', () => {
  it('delivers the existing objects (in pages), then every change', async () => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) f.server.store.create('nodes', node(n));
    watchNodes({ pageSize: 2 });
    await until(() => syncs === 1, 'the first sync');
    expect(seen).toEqual(['ADDED a', 'ADDED b', 'ADDED c', 'ADDED d', 'ADDED e']);

    f.server.store.create('nodes', node('f'));
    f.server.store.patch('nodes', undefined, 'a', 'application/merge-patch+json', {
      spec: { unschedulable: true },
    });
    f.server.store.delete('nodes', undefined, 'b');
    await until(() => seen.length === 8, 'three more events');
    expect(seen.slice(5)).toEqual(['ADDED f', 'MODIFIED a', 'DELETED b']);
  });

  it('reconnects after the server drops the stream, without relisting', async () => {
    f.server.store.create('nodes', node('a'));
    watchNodes();
    await until(() => syncs === 1, 'the first sync');
    f.server.faults.dropWatches();
    f.server.store.create('nodes', node('b'));
    await until(() => seen.includes('ADDED b'), 'the node created after the drop');
    expect(syncs).toBe(1);
  });

  it('relists after 410 and reports what vanished meanwhile as DELETED', async () => {
    f.server.store.create('nodes', node('a'));
    f.server.store.create('nodes', node('b'));
    watchNodes();
    await until(() => syncs === 1, 'the first sync');
    f.server.faults.failRequests({ status: 503, forMs: 300, match: /nodes/ });
    f.server.faults.dropWatches();
    f.server.store.delete('nodes', undefined, 'a');
    f.server.store.create('nodes', node('c'));
    f.server.faults.compactHistory();
    await until(() => syncs === 2, 'a relist');
    await until(
      () => seen.includes('DELETED a') && seen.includes('ADDED c'),
      'the changes missed while away',
    );
    expect(lists()).toBeGreaterThanOrEqual(2);
  });

  it('backs off through a window of 503s and then resumes', async () => {
    watchNodes();
    await until(() => syncs === 1, 'the first sync');
    f.server.faults.failRequests({ status: 503, forMs: 400, match: /nodes/ });
    f.server.faults.dropWatches();
    await until(() => f.server.requestLog.some((r) => r.status === 503), 'a 503');
    f.server.store.create('nodes', node('late'));
    await until(() => seen.includes('ADDED late'), 'the node created during the outage');
    expect(f.codes).toContain('503');
  });

  it('watchFirst: a watch without resourceVersion brings the existing objects (no list); after a 410 it starts again the same way', async () => {
    f.server.store.create('nodes', node('a'));
    f.server.store.create('nodes', node('b'));
    let opened = 0;
    watchNodes({ watchFirst: true, onOpen: () => opened++ });
    await until(() => seen.length === 2, 'the existing nodes');
    expect(seen).toEqual(['ADDED a', 'ADDED b']);
    f.server.store.create('nodes', node('c'));
    await until(() => seen.includes('ADDED c'), 'a change');

    // away while a vanished and d came, and the history compacted: 410, then from the start again
    f.server.faults.dropWatches();
    f.server.store.delete('nodes', undefined, 'a');
    f.server.store.create('nodes', node('d'));
    f.server.faults.compactHistory();
    await until(() => seen.includes('ADDED d'), 'the objects as they are now');
    expect(seen.slice(3)).toEqual(['ADDED b', 'ADDED c', 'ADDED d']);
    // no end-of-initial-state marker: what that stream never named is known gone when it ends
    expect(seen).not.toContain('DELETED a');
    f.server.faults.dropWatches();
    await until(() => seen.includes('DELETED a'), 'a reported gone');

    const watches = f.server.requestLog.filter((r) => r.path.startsWith('/api/v1/nodes?'));
    expect(lists()).toBe(0);
    expect(syncs).toBe(0);
    expect(watches[0]?.path).not.toContain('resourceVersion=');
    // the reconnect after the first drop carried its resourceVersion, and was answered 410 (an ERROR event)
    expect(watches[1]?.path).toContain('resourceVersion=');
    expect(watches[2]?.path).not.toContain('resourceVersion=');
    expect(opened).toBeGreaterThanOrEqual(3);
  });

  it('resolves when its signal aborts', async () => {
    watchNodes();
    await until(() => syncs === 1, 'the first sync');
    stop.abort();
    await expect(running).resolves.toBeUndefined();
  });
});
