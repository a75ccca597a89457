import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApi, node, pod, type Api } from './helpers.ts';

describe('sandbox API server: objects', () => {
  let api: Api;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(() => api.server.close());

  it('fills in name, uid, creationTimestamp and resourceVersion on create', async () => {
    const res = await api.call('POST', '/api/v1/namespaces/default/pods', {
      metadata: { generateName: 'web-' },
      spec: {},
    });

    expect(res.status).toBe(201);
    expect(res.body.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(res.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Number(res.body.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(res.body).toMatchObject({ apiVersion: 'v1', kind: 'Pod', status: { phase: 'Pending' } });
  });

  it('answers 409 AlreadyExists for a second object of the same name', async () => {
    await api.call('POST', '/api/v1/nodes', node('n1'));

    const res = await api.call('POST', '/api/v1/nodes', node('n1'));

    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      kind: 'Status',
      reason: 'AlreadyExists',
      message: 'nodes "n1" already exists',
    });
  });

  it('answers 404 NotFound with the resource and name, and 404 for a namespace that does not exist', async () => {
    const missing = await api.get('/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/nm1');
    const noNamespace = await api.call('POST', '/api/v1/namespaces/nowhere/pods', pod('nowhere', 'p'));

    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      reason: 'NotFound',
      message: 'nodemaintenances.nodemaintenance.medik8s.io "nm1" not found',
      details: { name: 'nm1', group: 'nodemaintenance.medik8s.io', kind: 'nodemaintenances' },
    });
    expect(noNamespace.status).toBe(404);
    expect(noNamespace.body.message).toBe('namespaces "nowhere" not found');
  });

  it('rejects an update carrying a stale resourceVersion with 409 Conflict', async () => {
    const created = (await api.call('POST', '/api/v1/nodes', node('n1'))).body;
    const fresh = await api.call('PUT', '/api/v1/nodes/n1', {
      ...created,
      metadata: { ...created.metadata, labels: { a: '1' } },
    });

    const stale = await api.call('PUT', '/api/v1/nodes/n1', {
      ...created,
      metadata: { ...created.metadata, labels: { a: '2' } },
    });

    expect(fresh.status).toBe(200);
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on nodes "n1": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('ignores status on the main resource and everything but status on /status', async () => {
    api.server.store.create('nodes', node('n1'));
    const current = api.server.store.get('nodes', undefined, 'n1');

    const main = await api.call('PUT', '/api/v1/nodes/n1', {
      ...current,
      spec: { unschedulable: true },
      status: { phase: 'X' },
    });
    const status = await api.call('PUT', '/api/v1/nodes/n1/status', {
      ...main.body,
      spec: {},
      status: { phase: 'Y' },
    });

    expect(main.body.spec).toEqual({ unschedulable: true });
    expect(main.body.status).toEqual(current.status);
    expect(status.body.spec).toEqual({ unschedulable: true });
    expect(status.body.status).toEqual({ phase: 'Y' });
  });

  it('does not bump the resourceVersion for an update that changes nothing', async () => {
    const created = api.server.store.create('nodes', node('n1'));

    const again = api.server.store.update('nodes', created);

    expect(again.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('serves a custom resource as soon as its CustomResourceDefinition is created', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
        ],
      },
    };
    const before = await api.get('/apis/example.com/v1');

    await api.call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    const discovery = await api.get('/apis/example.com/v1');
    const created = await api.call('POST', '/apis/example.com/v1/namespaces/default/widgets', {
      metadata: { name: 'w' },
    });

    expect(before.status).toBe(404);
    expect(discovery.body.resources[0]).toMatchObject({ name: 'widgets', kind: 'Widget', namespaced: true });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget' });
  });

  it('lists the eviction subresource in core discovery the way kubectl drain looks for it', async () => {
    const res = await api.get('/api/v1');

    expect(res.body.resources).toContainEqual(
      expect.objectContaining({ name: 'pods/eviction', kind: 'Eviction', group: 'policy', version: 'v1' }),
    );
  });
});

describe('sandbox API server: deletion', () => {
  let api: Api;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(() => api.server.close());

  it('keeps an object with finalizers until the last finalizer is removed', async () => {
    const s = api.server.store;
    s.create('nodemaintenances.nodemaintenance.medik8s.io', {
      metadata: { name: 'nm1', finalizers: ['drainer.dev/cleanup', 'other/keep'] },
      spec: { nodeName: 'n1' },
    });

    const del = await api.call('DELETE', '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/nm1');
    const one = await api.call(
      'PATCH',
      '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/nm1',
      [{ op: 'remove', path: '/metadata/finalizers/0' }],
      'application/json-patch+json',
    );
    const stillThere = s.find('nodemaintenances.nodemaintenance.medik8s.io', undefined, 'nm1');
    await api.call(
      'PATCH',
      '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/nm1',
      { metadata: { finalizers: null } },
      'application/merge-patch+json',
    );

    expect(del.status).toBe(200);
    expect(del.body.metadata.deletionTimestamp).toBeDefined();
    expect(one.body.metadata.finalizers).toEqual(['other/keep']);
    expect(stillThere?.metadata.deletionTimestamp).toBeDefined();
    expect(s.find('nodemaintenances.nodemaintenance.medik8s.io', undefined, 'nm1')).toBeUndefined();
  });

  it('refuses new finalizers on an object that is being deleted', async () => {
    const s = api.server.store;
    s.create('nodemaintenances.nodemaintenance.medik8s.io', {
      metadata: { name: 'nm1', finalizers: ['a/b'] },
      spec: { nodeName: 'n1' },
    });
    s.delete('nodemaintenances.nodemaintenance.medik8s.io', undefined, 'nm1');

    const res = await api.call(
      'PATCH',
      '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances/nm1',
      { metadata: { finalizers: ['a/b', 'c/d'] } },
      'application/merge-patch+json',
    );

    expect(res.status).toBe(422);
  });

  it('leaves a running pod terminating for its grace period until the kubelet finishes it', async () => {
    const s = api.server.store;
    s.create('pods', pod('default', 'p1', { node: 'n1', grace: 30 }));

    const del = await api.call('DELETE', '/api/v1/namespaces/default/pods/p1');
    const terminating = s.find('pods', 'default', 'p1');
    const gone = s.finalizeDeletion('pods', 'default', 'p1');

    expect(del.body.metadata).toMatchObject({ deletionGracePeriodSeconds: 30 });
    expect(terminating?.metadata.deletionTimestamp).toBeDefined();
    expect(gone).toBe(true);
    expect(s.find('pods', 'default', 'p1')).toBeUndefined();
  });

  it('deletes at once with gracePeriodSeconds=0 or for a pod on no node', async () => {
    const s = api.server.store;
    s.create('pods', pod('default', 'p1', { node: 'n1', grace: 30 }));
    s.create('pods', pod('default', 'p2', { grace: 30 }));

    const zero = await api.call('DELETE', '/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0');
    await api.call('DELETE', '/api/v1/namespaces/default/pods/p2');

    // The pod registry answers with the deleted pod rather than a Status (as recorded from a real server).
    expect(zero.body).toMatchObject({
      kind: 'Pod',
      metadata: { name: 'p1', deletionGracePeriodSeconds: 0, deletionTimestamp: expect.any(String) },
    });
    expect(s.find('pods', 'default', 'p1')).toBeUndefined();
    expect(s.find('pods', 'default', 'p2')).toBeUndefined();
  });

  it('answers 409 when a delete precondition names another uid', async () => {
    api.server.store.create('nodes', node('n1'));

    const res = await api.call('DELETE', '/api/v1/nodes/n1', { preconditions: { uid: 'not-this-one' } });

    expect(res.status).toBe(409);
    expect(api.server.store.find('nodes', undefined, 'n1')).toBeDefined();
  });

  it('with propagationPolicy Orphan (kubectl delete --cascade=orphan) takes the owner off its dependents first, as the garbage collector does', async () => {
    const s = api.server.store;
    const ds = s.create('daemonsets.apps', {
      metadata: { name: 'agent', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } } },
      },
    });
    const owner = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: ds.metadata.uid ?? '' };
    const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'other-uid' };
    s.create('poddisruptionbudgets.policy', {
      metadata: { name: 'guard', namespace: 'default', ownerReferences: [owner] },
      spec: { minAvailable: 1 },
    });
    s.create('pods', { ...pod('default', 'p1'), metadata: { name: 'p1', ownerReferences: [owner, other] } });
    const seen: string[] = [];
    const off = s.subscribe('poddisruptionbudgets.policy', (type, o) =>
      seen.push(`${type} ${JSON.stringify(o.metadata.ownerReferences ?? [])}`),
    );

    const del = await api.call('DELETE', '/apis/apps/v1/namespaces/default/daemonsets/agent', {
      propagationPolicy: 'Orphan',
    });
    off();

    // the answer is the owner marked for deletion, waiting for the garbage collector
    expect(del.status).toBe(200);
    expect(del.body.metadata).toMatchObject({
      finalizers: ['orphan'],
      deletionTimestamp: expect.any(String),
    });
    expect(s.find('daemonsets.apps', 'default', 'agent')).toBeUndefined();
    expect(
      s.find('poddisruptionbudgets.policy', 'default', 'guard')?.metadata.ownerReferences,
    ).toBeUndefined();
    expect(s.find('pods', 'default', 'p1')?.metadata.ownerReferences).toEqual([other]);
    // the dependent's watchers see it lose its owner
    expect(seen).toEqual(['MODIFIED []']);
  });
});
