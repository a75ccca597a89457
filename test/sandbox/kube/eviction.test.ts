import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/sandbox/kube/index.ts';
import { startApi, pod, type Api } from './helpers.ts';

const PDB = 'poddisruptionbudgets.policy';

function pdb(name: string, labels: Record<string, string>, status: Record<string, unknown>): KubeObject {
  return {
    metadata: { name, namespace: 'apps' },
    spec: { minAvailable: 2, selector: { matchLabels: labels } },
    status: { observedGeneration: 1, ...status },
  };
}

const eviction = (name: string, deleteOptions?: object) => ({
  apiVersion: 'policy/v1',
  kind: 'Eviction',
  metadata: { name, namespace: 'apps' },
  ...(deleteOptions ? { deleteOptions } : {}),
});

describe('sandbox API server: pods/eviction', () => {
  let api: Api;
  const evict = (name: string, deleteOptions?: object) =>
    api.call('POST', `/api/v1/namespaces/apps/pods/${name}/eviction`, eviction(name, deleteOptions));

  beforeEach(async () => {
    api = await startApi();
    api.server.store.create('namespaces', { metadata: { name: 'apps' } });
    api.server.store.create('pods', pod('apps', 'web-1', { node: 'n1', labels: { app: 'web' }, grace: 30 }));
  });
  afterEach(() => api.server.close());

  it('answers 201 Success and deletes honouring the grace period when no budget applies', async () => {
    const res = await evict('web-1');

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(api.server.store.get('pods', 'apps', 'web-1').metadata.deletionGracePeriodSeconds).toBe(30);
  });

  it('takes the grace period from the DeleteOptions in the Eviction', async () => {
    await evict('web-1', { gracePeriodSeconds: 0 });

    expect(api.server.store.find('pods', 'apps', 'web-1')).toBeUndefined();
  });

  it('answers 404 for a pod that does not exist', async () => {
    const res = await evict('nope');

    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ reason: 'NotFound', message: 'pods "nope" not found' });
  });

  it('consumes one allowed disruption and records the pod in the budget', async () => {
    api.server.store.create(
      PDB,
      pdb('web', { app: 'web' }, { disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2 }),
    );

    const res = await evict('web-1');
    const budget = api.server.store.get(PDB, 'apps', 'web');

    expect(res.status).toBe(201);
    expect(budget.status).toMatchObject({
      disruptionsAllowed: 0,
      disruptedPods: { 'web-1': expect.any(String) },
    });
  });

  it('answers 429 with the budget named in the cause when no disruption is allowed', async () => {
    api.server.store.create(
      PDB,
      pdb('web', { app: 'web' }, { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 }),
    );

    const res = await evict('web-1');

    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({
      kind: 'Status',
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: {
        causes: [
          {
            reason: 'DisruptionBudget',
            message: 'The disruption budget web needs 2 healthy pods and has 2 currently',
          },
        ],
      },
    });
    expect(api.server.store.get('pods', 'apps', 'web-1').metadata.deletionTimestamp).toBeUndefined();
  });

  it('answers 429 while the disruption controller has not observed the budget yet', async () => {
    api.server.store.create(PDB, {
      ...pdb('web', { app: 'web' }, { disruptionsAllowed: 1 }),
      status: { disruptionsAllowed: 1 },
    });

    const res = await evict('web-1');

    expect(res.status).toBe(429);
    expect(res.body.details.causes[0].message).toBe(
      'The disruption budget web is still being processed by the server.',
    );
  });

  it('answers 500 when more than one budget selects the pod', async () => {
    api.server.store.create(PDB, pdb('a', { app: 'web' }, { disruptionsAllowed: 1 }));
    api.server.store.create(PDB, pdb('b', { app: 'web' }, { disruptionsAllowed: 1 }));

    const res = await evict('web-1');

    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      status: 'Failure',
      message:
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    });
  });

  it('evicts a pending pod without consulting budgets', async () => {
    api.server.store.create(
      'pods',
      pod('apps', 'web-2', { node: 'n1', labels: { app: 'web' }, phase: 'Pending' }),
    );
    api.server.store.create(PDB, pdb('web', { app: 'web' }, { disruptionsAllowed: 0 }));

    const res = await evict('web-2');

    expect(res.status).toBe(201);
  });

  it('lets an eviction hook answer instead, as an admission webhook would', async () => {
    api.server.evictionHooks.push((p) =>
      p.metadata.name === 'web-1'
        ? {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            code: 429,
            reason: 'TooManyRequests',
            message: 'Eviction triggered evacuation of VMI',
          }
        : undefined,
    );

    const res = await evict('web-1');

    expect(res.status).toBe(429);
    expect(res.body.message).toBe('Eviction triggered evacuation of VMI');
    expect(api.server.store.get('pods', 'apps', 'web-1').metadata.deletionTimestamp).toBeUndefined();
  });

  it('checks the budget on a dry run but neither consumes it nor deletes the pod', async () => {
    api.server.store.create(PDB, pdb('web', { app: 'web' }, { disruptionsAllowed: 1, currentHealthy: 3 }));
    const dryRun = (name: string) =>
      api.call('POST', `/api/v1/namespaces/apps/pods/${name}/eviction?dryRun=All`, eviction(name));

    const allowed = await dryRun('web-1');
    api.server.store.create('pods', pod('apps', 'web-2', { node: 'n1', labels: { app: 'web' } }));
    api.server.store.updateStatus(PDB, {
      ...api.server.store.get(PDB, 'apps', 'web'),
      status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 },
    });
    const blocked = await dryRun('web-2');

    expect(allowed.status).toBe(201);
    expect(blocked.status).toBe(429);
    expect(blocked.body.details.causes[0].reason).toBe('DisruptionBudget');
    expect(api.server.store.get(PDB, 'apps', 'web').status).not.toHaveProperty('disruptedPods');
    expect(api.server.store.get('pods', 'apps', 'web-1').metadata.deletionTimestamp).toBeUndefined();
    expect(api.server.store.get('pods', 'apps', 'web-2').metadata.deletionTimestamp).toBeUndefined();
  });
});
