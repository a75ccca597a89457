// Drives the sandbox with the real @kubernetes/client-node 2.x, the client drainer itself uses.
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApi, node, pod, type Api } from './helpers.ts';

describe('sandbox API server with @kubernetes/client-node', () => {
  let api: Api;
  let kc: KubeConfig;
  beforeEach(async () => {
    api = await startApi({ token: 'e2e-token' });
    kc = new KubeConfig();
    kc.loadFromString(api.server.kubeconfig());
    for (const name of ['n1', 'n2']) api.server.store.create('nodes', node(name));
  });
  afterEach(() => api.server.close());

  it('lists nodes and pods by field selector', async () => {
    api.server.store.create('pods', pod('default', 'p1', { node: 'n1' }));
    api.server.store.create('pods', pod('default', 'p2', { node: 'n2' }));
    const core = kc.makeApiClient(CoreV1Api);

    const nodes = await core.listNode();
    const pods = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=n1' });

    expect(nodes.items.map((n) => n.metadata?.name)).toEqual(['n1', 'n2']);
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(['p1']);
  });

  it('cordons with a merge patch and taints with a guarded JSON patch', async () => {
    const core = kc.makeApiClient(CoreV1Api);

    const cordoned = await core.patchNode(
      { name: 'n1', body: { spec: { unschedulable: true } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const tainted = await core.patchNode(
      {
        name: 'n1',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: cordoned.metadata?.resourceVersion },
          {
            op: 'add',
            path: '/spec/taints',
            value: [{ key: 'drainer.dev/evacuating', effect: 'NoSchedule' }],
          },
        ],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const stale = core.patchNode(
      {
        name: 'n1',
        body: [{ op: 'test', path: '/metadata/resourceVersion', value: cordoned.metadata?.resourceVersion }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );

    expect(cordoned.spec?.unschedulable).toBe(true);
    expect(tainted.spec?.taints).toEqual([{ key: 'drainer.dev/evacuating', effect: 'NoSchedule' }]);
    await expect(stale).rejects.toMatchObject({ code: 422 });
  });

  it('gets 415 from a strategic merge patch on a NodeMaintenance and succeeds with a merge patch', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    await custom.createClusterCustomObject({
      group: 'nodemaintenance.medik8s.io',
      version: 'v1beta1',
      plural: 'nodemaintenances',
      body: {
        apiVersion: 'nodemaintenance.medik8s.io/v1beta1',
        kind: 'NodeMaintenance',
        metadata: { name: 'nm1' },
        spec: { nodeName: 'n1' },
      },
    });
    const target = {
      group: 'nodemaintenance.medik8s.io',
      version: 'v1beta1',
      plural: 'nodemaintenances',
      name: 'nm1',
    };

    const strategic = custom.patchClusterCustomObjectStatus(
      { ...target, body: { status: { phase: 'Running' } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    await expect(strategic).rejects.toBeInstanceOf(ApiException);
    await expect(strategic).rejects.toMatchObject({ code: 415 });
    const merged = await custom.patchClusterCustomObjectStatus(
      { ...target, body: { status: { phase: 'Running' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    expect(merged.status).toEqual({ phase: 'Running' });
  });

  it('watches nodes from a list resourceVersion and sees the cordon', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const list = await core.listNode();
    const seen: string[] = [];
    const done = new Promise<void>((resolve) => {
      void new Watch(kc)
        .watch(
          '/api/v1/nodes',
          { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
          (type, obj: V1Node) => {
            seen.push(`${type} ${obj.metadata?.name} ${String(obj.spec?.unschedulable ?? false)}`);
            if (seen.length === 1) resolve();
          },
          () => resolve(),
        )
        .then((ctrl) => done.finally(() => ctrl.abort()));
    });
    await new Promise((r) => setTimeout(r, 50));

    await core.patchNode(
      { name: 'n2', body: { spec: { unschedulable: true } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await done;

    expect(seen).toEqual(['MODIFIED n2 true']);
  });

  it('evicts through the policy/v1 Eviction subresource', async () => {
    api.server.store.create('pods', pod('default', 'p1', { node: 'n1', grace: 0 }));
    const core = kc.makeApiClient(CoreV1Api);

    await core.createNamespacedPodEviction({
      name: 'p1',
      namespace: 'default',
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p1', namespace: 'default' } },
    });

    expect(api.server.store.find('pods', 'default', 'p1')).toBeUndefined();
  });
});
