// An HTTP create is answered with what the real server stores: scheme defaults, admission's
// tolerations and the pod's QoS class (objects a scenario seeds through the store stay as given).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApi, type Api } from './helpers.ts';

describe('sandbox API server: defaults on create', () => {
  let api: Api;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(() => api.server.close());

  it('fills in a pod as the API server does and keeps what the request set', async () => {
    const res = await api.call('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'p1' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          { name: 'a', image: 'registry.example/a:1' },
          { name: 'b', image: 'registry.example/b', resources: { requests: { cpu: '1' } } },
        ],
      },
      status: { phase: 'Running' },
    });

    expect(res.status).toBe(201);
    expect(res.body.spec).toMatchObject({
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
    });
    expect(res.body.spec.containers.map((c: { imagePullPolicy: string }) => c.imagePullPolicy)).toEqual([
      'IfNotPresent',
      'Always',
    ]);
    expect(res.body.status).toEqual({ phase: 'Pending', qosClass: 'Burstable' });
  });

  it('gives a node empty daemon endpoints and node info, and an event its reporting fields', async () => {
    const nodeRes = await api.call('POST', '/api/v1/nodes', { metadata: { name: 'n1' } });
    const eventRes = await api.call('POST', '/api/v1/namespaces/default/events', {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Node', name: 'n1' },
      reason: 'R',
      type: 'Normal',
    });

    expect(nodeRes.body.status).toMatchObject({
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: { kubeletVersion: '', architecture: '' },
    });
    expect(eventRes.body).toMatchObject({ eventTime: null, reportingComponent: '', reportingInstance: '' });
  });
});
