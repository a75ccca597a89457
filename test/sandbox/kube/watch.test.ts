import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApi, node, pod, readWatch, type Api } from './helpers.ts';

describe('sandbox API server: watch', () => {
  let api: Api;
  beforeEach(async () => {
    api = await startApi({ bookmarkIntervalMs: 20 });
  });
  afterEach(() => api.server.close());

  it('resumes from a resourceVersion with exactly the changes after it', async () => {
    const s = api.server.store;
    s.create('nodes', node('n1'));
    const rv = s.resourceVersion;
    s.create('nodes', node('n2'));
    s.patch('nodes', undefined, 'n1', 'application/merge-patch+json', { spec: { unschedulable: true } });
    s.delete('nodes', undefined, 'n2');

    const events = await readWatch(
      `${api.server.url}/api/v1/nodes?watch=1&resourceVersion=${rv}`,
      (e) => e.length >= 3,
    );

    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'ADDED n2',
      'MODIFIED n1',
      'DELETED n2',
    ]);
    expect(Number(events[2]?.object.metadata.resourceVersion)).toBeGreaterThan(
      Number(events[1]?.object.metadata.resourceVersion),
    );
  });

  it('starts with the current objects when no resourceVersion is given, then follows live changes', async () => {
    const s = api.server.store;
    s.create('nodes', node('n1'));

    const watching = readWatch(`${api.server.url}/api/v1/nodes?watch=true`, (e) => e.length >= 2);
    setTimeout(() => s.create('nodes', node('n2')), 50);
    const events = await watching;

    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED n1', 'ADDED n2']);
  });

  it('sends one ERROR event with 410 Expired for a resourceVersion older than the history', async () => {
    const s = api.server.store;
    s.create('nodes', node('n1'));
    const old = s.resourceVersion;
    s.create('nodes', node('n2'));
    api.server.faults.compactHistory();

    const events = await readWatch(
      `${api.server.url}/api/v1/nodes?watch=1&resourceVersion=${old}`,
      () => false,
    );

    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired' },
    });
    expect(events[0]?.object.message).toMatch(/^too old resource version: /);
  });

  it('answers a watch from before the server started serving (resourceVersion 1) with the 410 ERROR', async () => {
    api.server.store.create('nodes', node('n1'));

    const events = await readWatch(`${api.server.url}/api/v1/nodes?watch=1&resourceVersion=1`, () => false);
    const current = await readWatch(
      `${api.server.url}/api/v1/nodes?watch=1&resourceVersion=${Number(api.server.store.resourceVersion) - 1}`,
      (e) => e.length >= 1,
    );

    expect(events).toEqual([
      { type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired' }) },
    ]);
    expect(current.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED n1']);
  });

  it('forgets the oldest changes beyond the history size', async () => {
    const small = await startApi({ historySize: 3 });
    const s = small.server.store;
    const start = s.resourceVersion;
    for (let i = 0; i < 5; i++) s.create('nodes', node(`n${i}`));

    const events = await readWatch(
      `${small.server.url}/api/v1/nodes?watch=1&resourceVersion=${start}`,
      () => false,
    );
    await small.server.close();

    expect(events[0]?.type).toBe('ERROR');
  });

  it('turns changes that enter or leave a field selector into ADDED and DELETED', async () => {
    const s = api.server.store;
    s.create('pods', pod('default', 'p1', { node: 'n1', phase: 'Pending' }));
    const rv = s.resourceVersion;
    s.updateStatus('pods', { ...s.get('pods', 'default', 'p1'), status: { phase: 'Running' } });
    s.updateStatus('pods', {
      ...s.get('pods', 'default', 'p1'),
      status: { phase: 'Running', podIP: '10.0.0.1' },
    });
    s.updateStatus('pods', { ...s.get('pods', 'default', 'p1'), status: { phase: 'Succeeded' } });

    const events = await readWatch(
      `${api.server.url}/api/v1/namespaces/default/pods?watch=1&resourceVersion=${rv}&fieldSelector=status.phase%3DRunning`,
      (e) => e.length >= 3,
    );

    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  });

  it('sends BOOKMARK events when asked and ends the stream after timeoutSeconds', async () => {
    api.server.store.create('nodes', node('n1'));
    const rv = api.server.store.resourceVersion;

    const events = await readWatch(
      `${api.server.url}/api/v1/nodes?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`,
      () => false,
    );

    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.type === 'BOOKMARK')).toBe(true);
    expect(events[0]?.object).toMatchObject({ kind: 'Node', metadata: { resourceVersion: rv } });
  });

  it('marks the end of initial events with a bookmark for sendInitialEvents', async () => {
    api.server.store.create('nodes', node('n1'));

    const events = await readWatch(
      `${api.server.url}/api/v1/nodes?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
      (e) => e.some((x) => x.type === 'BOOKMARK'),
    );

    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'n1' } } });
    expect(events[1]?.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
  });

  it('ends every open stream when watches are dropped', async () => {
    const watching = readWatch(`${api.server.url}/api/v1/nodes?watch=1`, () => false);
    await new Promise((r) => setTimeout(r, 50));

    api.server.faults.dropWatches();

    await expect(watching).resolves.toEqual([]);
  });

  it('delivers changes in resourceVersion order even when a subscriber writes from its callback', () => {
    const s = api.server.store;
    const order: number[] = [];
    s.subscribe('nodes', (type, obj) => {
      if (type === 'ADDED')
        s.patch('nodes', undefined, obj.metadata.name ?? '', 'application/merge-patch+json', {
          metadata: { labels: { seen: 'yes' } },
        });
    });
    s.subscribe('nodes', (_type, obj) => order.push(Number(obj.metadata.resourceVersion)));

    s.create('nodes', node('n1'));

    expect(order).toHaveLength(2);
    expect(order[0]).toBeLessThan(order[1] as number);
  });

  it('delivers changes to in-process subscribers as copies', () => {
    const seen: string[] = [];
    const stop = api.server.store.subscribe('nodes', (type, obj) => {
      seen.push(`${type} ${obj.metadata.name}`);
      obj.metadata.name = 'mutated';
    });

    api.server.store.create('nodes', node('n1'));
    stop();
    api.server.store.create('nodes', node('n2'));

    expect(seen).toEqual(['ADDED n1']);
    expect(api.server.store.find('nodes', undefined, 'n1')).toBeDefined();
  });
});
