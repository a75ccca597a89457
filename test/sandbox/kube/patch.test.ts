import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApi, node, type Api } from './helpers.ts';

const NM = '/apis/nodemaintenance.medik8s.io/v1beta1/nodemaintenances';

describe('sandbox API server: patches', () => {
  let api: Api;
  beforeEach(async () => {
    api = await startApi();
    api.server.store.create(
      'nodes',
      node('n1', {
        spec: { taints: [{ key: 'a', effect: 'NoSchedule' }] },
        status: {
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'MemoryPressure', status: 'False' },
          ],
        },
      }),
    );
    api.server.store.create('nodemaintenances.nodemaintenance.medik8s.io', {
      metadata: { name: 'nm1' },
      spec: { nodeName: 'n1' },
    });
  });
  afterEach(() => api.server.close());

  it('applies a JSON merge patch, removing keys set to null', async () => {
    const res = await api.call(
      'PATCH',
      '/api/v1/nodes/n1',
      { spec: { unschedulable: true }, metadata: { labels: { 'kubernetes.io/hostname': null, x: 'y' } } },
      'application/merge-patch+json',
    );

    expect(res.status).toBe(200);
    expect(res.body.spec).toEqual({ taints: [{ key: 'a', effect: 'NoSchedule' }], unschedulable: true });
    expect(res.body.metadata.labels).toEqual({ x: 'y' });
  });

  it('treats a resourceVersion inside a patch as a precondition (409 when stale)', async () => {
    const res = await api.call(
      'PATCH',
      `${NM}/nm1/status`,
      { metadata: { resourceVersion: '1' }, status: { phase: 'Running' } },
      'application/merge-patch+json',
    );

    expect(res.status).toBe(409);
    expect(res.body.reason).toBe('Conflict');
  });

  it('applies a JSON patch whose test op holds', async () => {
    const res = await api.call(
      'PATCH',
      '/api/v1/nodes/n1',
      [
        { op: 'test', path: '/spec/taints', value: [{ key: 'a', effect: 'NoSchedule' }] },
        { op: 'add', path: '/spec/taints/-', value: { key: 'drainer.dev/evacuating', effect: 'NoSchedule' } },
      ],
      'application/json-patch+json',
    );

    expect(res.status).toBe(200);
    expect(res.body.spec.taints).toHaveLength(2);
  });

  it('answers 422 and changes nothing when a JSON patch test op fails', async () => {
    const before = api.server.store.get('nodes', undefined, 'n1');

    const res = await api.call(
      'PATCH',
      '/api/v1/nodes/n1',
      [
        { op: 'test', path: '/spec/taints', value: [] },
        { op: 'replace', path: '/spec/taints', value: [] },
      ],
      'application/json-patch+json',
    );

    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      reason: 'Invalid',
      message: 'the server rejected our request due to an error in our request',
    });
    expect(api.server.store.get('nodes', undefined, 'n1')).toEqual(before);
    // the answer is the same as for a body the server rejects; the request log tells the guard's conflict
    expect(api.server.requestLog.at(-1)).toMatchObject({ status: 422, guardFailed: true });
  });

  it('a 422 for anything else is no guard failure', async () => {
    await api.call(
      'PATCH',
      '/api/v1/nodes/n1',
      [{ op: 'remove', path: '/spec/nothing' }],
      'application/json-patch+json',
    );

    expect(api.server.requestLog.at(-1)).toMatchObject({ status: 422 });
    expect(api.server.requestLog.at(-1)?.guardFailed).toBeUndefined();
  });

  it('merges strategic patches by key for conditions and replaces taints whole, as core/v1 declares', async () => {
    const res = await api.call(
      'PATCH',
      '/api/v1/nodes/n1/status',
      { status: { conditions: [{ type: 'MemoryPressure', status: 'True' }] } },
      'application/strategic-merge-patch+json',
    );
    const taints = await api.call(
      'PATCH',
      '/api/v1/nodes/n1',
      { spec: { taints: [{ key: 'b', effect: 'NoExecute' }] } },
      'application/strategic-merge-patch+json',
    );

    expect(res.body.status.conditions).toEqual([
      { type: 'Ready', status: 'True' },
      { type: 'MemoryPressure', status: 'True' },
    ]);
    expect(taints.body.spec.taints).toEqual([{ key: 'b', effect: 'NoExecute' }]);
  });

  it('answers 415 for a strategic merge patch on a custom resource', async () => {
    const res = await api.call(
      'PATCH',
      `${NM}/nm1`,
      { spec: { reason: 'x' } },
      'application/strategic-merge-patch+json',
    );

    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
    expect(res.body.message).toContain('application/merge-patch+json');
  });

  it('answers a bare 415 for a content type that is no patch type at all', async () => {
    const res = await api.call('PATCH', `${NM}/nm1`, { spec: {} }, 'application/json');

    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({
      reason: 'UnsupportedMediaType',
      message: '415: Unsupported Media Type',
    });
  });

  it('patches only the status through /status and never the spec', async () => {
    const res = await api.call(
      'PATCH',
      `${NM}/nm1/status`,
      { spec: { nodeName: 'other' }, status: { phase: 'Running' } },
      'application/merge-patch+json',
    );
    const main = await api.call(
      'PATCH',
      `${NM}/nm1`,
      { status: { phase: 'Failed' } },
      'application/merge-patch+json',
    );

    expect(res.body.spec.nodeName).toBe('n1');
    expect(res.body.status).toEqual({ phase: 'Running' });
    expect(main.body.status).toEqual({ phase: 'Running' });
  });

  it('raises metadata.generation on spec changes only', async () => {
    const spec = await api.call(
      'PATCH',
      `${NM}/nm1`,
      { spec: { reason: 'r' } },
      'application/merge-patch+json',
    );
    const status = await api.call(
      'PATCH',
      `${NM}/nm1/status`,
      { status: { phase: 'Running' } },
      'application/merge-patch+json',
    );

    expect(spec.body.metadata.generation).toBe(2);
    expect(status.body.metadata.generation).toBe(2);
  });
});
