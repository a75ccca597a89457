import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApi, node, pod, type Api } from './helpers.ts';

const names = (body: { items: { metadata: { name: string } }[] }) => body.items.map((i) => i.metadata.name);

describe('sandbox API server: list selectors and pagination', () => {
  let api: Api;
  beforeEach(async () => {
    api = await startApi();
    const s = api.server.store;
    s.create('namespaces', { metadata: { name: 'apps' } });
    s.create('pods', pod('apps', 'a', { node: 'n1', labels: { app: 'web', tier: 'front' } }));
    s.create('pods', pod('apps', 'b', { node: 'n1', labels: { app: 'db' } }));
    s.create('pods', pod('apps', 'c', { node: 'n2', labels: { app: 'web' }, phase: 'Succeeded' }));
    s.create('pods', pod('default', 'd', { node: 'n1', labels: {} }));
  });
  afterEach(() => api.server.close());

  it.each([
    ['app=web', ['a', 'c']],
    ['app==web', ['a', 'c']],
    ['app!=web', ['b', 'd']],
    ['app in (web,db)', ['a', 'b', 'c']],
    ['app notin (web)', ['b', 'd']],
    ['tier', ['a']],
    ['!tier', ['b', 'c', 'd']],
    ['app=web,!tier', ['c']],
  ])('selects pods by labelSelector %s', async (selector, expected) => {
    const res = await api.get(`/api/v1/pods?labelSelector=${encodeURIComponent(selector)}`);

    expect(names(res.body)).toEqual(expected);
  });

  it.each([
    ['spec.nodeName=n1', ['a', 'b', 'd']],
    ['spec.nodeName=n1,metadata.namespace=apps', ['a', 'b']],
    ['metadata.name=c', ['c']],
    ['status.phase!=Succeeded', ['a', 'b', 'd']],
    ['spec.nodeName==n2', ['c']],
  ])('selects pods by fieldSelector %s', async (selector, expected) => {
    const res = await api.get(`/api/v1/pods?fieldSelector=${encodeURIComponent(selector)}`);

    expect(names(res.body)).toEqual(expected);
  });

  describe('the integer comparisons, as the real API server reads them (fleet queue pages)', () => {
    beforeEach(() => {
      const s = api.server.store;
      s.create('namespaces', { metadata: { name: 'ranked' } });
      for (const [name, rank] of [
        ['r3', '3'],
        ['r12', '12'],
        ['rx', 'x'],
        ['r-1', '-1'],
      ] as const)
        s.create('pods', pod('ranked', name, { node: 'n1', labels: { rank } }));
    });
    const ranked = (selector: string, more = '') =>
      api.get(`/api/v1/namespaces/ranked/pods?labelSelector=${encodeURIComponent(selector)}${more}`);

    it.each([
      ['rank<10', ['r-1', 'r3']],
      ['rank>3', ['r12']],
      ['rank < 13', ['r-1', 'r12', 'r3']],
      ['rank>-2,rank<4', ['r-1', 'r3']],
    ])('compares %s as integers; a value that is not one matches neither way', async (selector, expected) => {
      expect(names((await ranked(selector)).body)).toEqual(expected);
    });

    it('answers 400 naming the value that is not an integer', async () => {
      const res = await ranked('rank<ten');

      expect(res.status).toBe(400);
      expect(res.body.message).toBe(
        `unable to parse requirement: values[0]: Invalid value: "ten": for 'Gt', 'Lt' operators, the value must be an integer`,
      );
      expect((await ranked('rank<=3')).status).toBe(400);
    });

    it('pages a comparison with limit and continue', async () => {
      const first = await ranked('rank<100', '&limit=2');
      const rest = await ranked('rank<100', `&limit=2&continue=${first.body.metadata.continue}`);

      expect(names(first.body)).toEqual(['r-1', 'r12']);
      expect(first.body.metadata.remainingItemCount).toBeUndefined();
      expect(names(rest.body)).toEqual(['r3']);
    });
  });

  it('answers 400 for a field the resource cannot be selected by', async () => {
    const res = await api.get('/api/v1/nodes?fieldSelector=spec.nodeName%3Dn1');

    expect(res.status).toBe(400);
    expect(res.body.message).toBe('field label not supported: spec.nodeName');
  });

  it('lists within one namespace when the path names it', async () => {
    const res = await api.get('/api/v1/namespaces/apps/pods');

    expect(res.body).toMatchObject({ kind: 'PodList', apiVersion: 'v1' });
    expect(names(res.body)).toEqual(['a', 'b', 'c']);
  });

  it('pages with limit and continue through every object exactly once', async () => {
    for (let i = 0; i < 7; i++) api.server.store.create('nodes', node(`node-${i}`));

    const first = await api.get('/api/v1/nodes?limit=3');
    const second = await api.get(`/api/v1/nodes?limit=3&continue=${first.body.metadata.continue}`);
    const third = await api.get(`/api/v1/nodes?limit=3&continue=${second.body.metadata.continue}`);

    expect(first.body.metadata.remainingItemCount).toBe(4);
    expect([...names(first.body), ...names(second.body), ...names(third.body)]).toEqual(
      Array.from({ length: 7 }, (_, i) => `node-${i}`),
    );
    expect(third.body.metadata.continue).toBeUndefined();
    expect(second.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
  });

  it('answers 410 for a continue token older than the compacted history', async () => {
    for (let i = 0; i < 3; i++) api.server.store.create('nodes', node(`node-${i}`));
    const first = await api.get('/api/v1/nodes?limit=1');
    api.server.store.create('nodes', node('later'));
    api.server.faults.compactHistory();

    const next = await api.get(`/api/v1/nodes?limit=1&continue=${first.body.metadata.continue}`);

    expect(next.status).toBe(410);
    expect(next.body.reason).toBe('Expired');
  });

  it('answers kubectl-style Table requests with its columns', async () => {
    const res = await fetch(`${api.server.url}/api/v1/namespaces/apps/pods`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    const table = (await res.json()) as {
      kind: string;
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[] }[];
    };

    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((c) => c.name)).toEqual([
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
      'IP',
      'Node',
    ]);
    expect(table.rows[0]?.cells.slice(0, 3)).toEqual(['a', '0/1', 'Running']);
  });

  it('answers 400 for a continue token it did not issue', async () => {
    const res = await api.get('/api/v1/nodes?limit=1&continue=garbage');

    expect(res.status).toBe(400);
  });
});
