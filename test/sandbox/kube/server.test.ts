import { request } from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { startApi, node, type Api } from './helpers.ts';

describe('sandbox API server: access and faults', () => {
  let api: Api | undefined;
  afterEach(() => api?.server.close());

  it('answers 401 without the bearer token it was started with', async () => {
    api = await startApi({ token: 'sekret' });

    const anonymous = await fetch(`${api.server.url}/api/v1/nodes`);
    const authorized = await fetch(`${api.server.url}/api/v1/nodes`, {
      headers: { Authorization: 'Bearer sekret' },
    });

    expect(anonymous.status).toBe(401);
    expect(authorized.status).toBe(200);
    expect(api.server.kubeconfig()).toContain('token: sekret');
  });

  it('serves HTTPS with a certificate its kubeconfig trusts', async () => {
    api = await startApi({ tls: true });
    const ca = api.server.caCert as string;

    const status = await new Promise<number>((resolve, reject) => {
      request(`${api?.server.url}/version`, { ca }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });

    expect(api.server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(status).toBe(200);
    expect(api.server.kubeconfig()).toContain(
      `certificate-authority-data: ${Buffer.from(ca).toString('base64')}`,
    );
  });

  it('fails matching requests with the injected status for a while', async () => {
    api = await startApi();
    api.server.store.create('nodes', node('n1'));
    api.server.faults.failRequests({ status: 503, forMs: 60_000, match: /\/nodes\/n1/ });

    const hit = await api.get('/api/v1/nodes/n1');
    const other = await api.get('/api/v1/nodes');

    expect(hit.status).toBe(503);
    expect(hit.body).toMatchObject({ kind: 'Status', code: 503, reason: 'ServiceUnavailable' });
    expect(other.status).toBe(200);
  });

  it('stops failing once the fault period is over', async () => {
    let now = 1_000_000;
    api = await startApi({
      clock: {
        now: () => now,
        wallOf: (ms) => ms,
        fromWall: (ms) => ms,
        scale: 1,
        sleep: async () => {},
        after: () => () => {},
      },
    });
    api.server.faults.failRequests({ status: 500, forMs: 1000 });

    const during = await api.get('/api/v1/nodes');
    now += 1001;
    const after = await api.get('/api/v1/nodes');

    expect(during.status).toBe(500);
    expect(after.status).toBe(200);
  });

  it('logs every request with its status', async () => {
    api = await startApi();

    await api.get('/api/v1/nodes/missing');

    expect(api.server.requestLog).toContainEqual(
      expect.objectContaining({ method: 'GET', path: '/api/v1/nodes/missing', status: 404 }),
    );
  });

  it('logs who asked, and which finalizers keep a pod whose delete it admitted', async () => {
    api = await startApi();
    const pod = (name: string, finalizers?: string[]) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, ...(finalizers ? { finalizers } : {}) },
      spec: { containers: [{ name: 'c', image: 'pause' }] },
    });
    await api.call('POST', '/api/v1/namespaces/default/pods', pod('kept', ['drainer.dev/gate']));
    await api.call('POST', '/api/v1/namespaces/default/pods', pod('gone'));

    await api.call('DELETE', '/api/v1/namespaces/default/pods/kept');
    await api.call('DELETE', '/api/v1/namespaces/default/pods/gone');

    const deletes = api.server.requestLog.filter((r) => r.method === 'DELETE');
    expect(deletes).toEqual([
      expect.objectContaining({
        path: '/api/v1/namespaces/default/pods/kept',
        status: 200,
        heldBy: ['drainer.dev/gate'],
      }),
      expect.not.objectContaining({ heldBy: expect.anything() }),
    ]);
    expect(deletes[0]?.userAgent).toEqual(expect.any(String));
  });

  it('logs the request that took a pod away for good: the PATCH that drops the last finalizer, not the held delete', async () => {
    api = await startApi();
    await api.call('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'gate', finalizers: ['drainer.dev/gate'] },
      spec: {
        nodeName: 'hv-1',
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'c', image: 'pause' }],
      },
    });
    const path = '/api/v1/namespaces/default/pods/gate';
    const MERGE = 'application/merge-patch+json';

    await api.call('DELETE', path);
    await api.call('PATCH', path, { metadata: { labels: { seen: 'yes' } } }, MERGE);
    await api.call('PATCH', path, { metadata: { finalizers: null } }, MERGE);

    const writes = api.server.requestLog.filter((r) => r.path === path);
    expect(writes.map((r) => [r.method, r.status, r.removed ?? false, r.podNode])).toEqual([
      ['DELETE', 200, false, 'hv-1'],
      ['PATCH', 200, false, 'hv-1'],
      ['PATCH', 200, true, 'hv-1'],
    ]);
  });

  it('installs the NodeMaintenance, KubeVirt, VMI and VMIM definitions unless told not to', async () => {
    api = await startApi();
    const bare = await startApi({ crds: false });

    const groups = (await api.get('/apis')).body.groups.map((g: { name: string }) => g.name);
    const bareGroups = (await bare.get('/apis')).body.groups.map((g: { name: string }) => g.name);
    const kubevirt = (await api.get('/apis/kubevirt.io/v1')).body.resources.map(
      (r: { name: string }) => r.name,
    );
    await bare.server.close();

    expect(groups).toEqual(
      expect.arrayContaining(['nodemaintenance.medik8s.io', 'nodemaintenance.kubevirt.io', 'kubevirt.io']),
    );
    expect(bareGroups).not.toContain('kubevirt.io');
    expect(kubevirt).toEqual(
      expect.arrayContaining(['kubevirts', 'virtualmachineinstances', 'virtualmachineinstancemigrations']),
    );
  });
});
