// The sandbox refuses what kube-apiserver refuses when it decodes a built-in object: a MicroTime
// without exactly 6 fractional digits, a string where an int goes, a non-string label or annotation
// value (400 on create and replace, 422 "patch: Invalid value" on a patch), and a label value that
// is no label value (422). What it accepts, it stores as the real one serializes it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { node, startApi, type Api } from './helpers.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';

const lease = (spec: Record<string, unknown>) => ({ metadata: { name: 'l1' }, spec });

describe('sandbox API server: decoding built-in objects as kube-apiserver does', () => {
  let api: Api;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(() => api.server.close());

  it('answers 400 to a Lease whose renewTime has millisecond precision', async () => {
    const res = await api.call(
      'POST',
      LEASES,
      lease({ holderIdentity: 'a', renewTime: '2026-11-28T01:00:00.123Z' }),
    );

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ reason: 'BadRequest', code: 400 });
    expect(res.body.message).toBe(
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-11-28T01:00:00.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    );
  });

  it('answers 400 to a MicroTime with no fraction or with nine digits', async () => {
    const whole = await api.call('POST', LEASES, lease({ acquireTime: '2026-11-28T01:00:00Z' }));
    const nano = await api.call('POST', LEASES, lease({ acquireTime: '2026-11-28T01:00:00.636526400Z' }));

    expect(whole.status).toBe(400);
    expect(whole.body.message).toContain('cannot parse "Z" as ".000000"');
    expect(nano.status).toBe(400);
    expect(nano.body.message).toContain('cannot parse "400Z" as "Z07:00"');
  });

  it('takes a MicroTime with 6 digits, and stores it in UTC', async () => {
    const res = await api.call(
      'POST',
      LEASES,
      lease({ renewTime: '2026-11-28T02:00:00.123456+01:00', leaseDurationSeconds: 300 }),
    );

    expect(res.status).toBe(201);
    expect(res.body.spec.renewTime).toBe('2026-11-28T01:00:00.123456Z');
  });

  it('answers 422 to a merge patch that leaves a millisecond renewTime in a Lease', async () => {
    await api.call('POST', LEASES, lease({ renewTime: '2026-11-28T01:00:00.000000Z' }));

    const res = await api.call(
      'PATCH',
      `${LEASES}/l1`,
      { spec: { renewTime: '2026-11-28T01:00:01.500Z' } },
      'application/merge-patch+json',
    );

    expect(res.status).toBe(422);
    expect(res.body.reason).toBe('Invalid');
    expect(res.body.details.causes[0]).toMatchObject({ field: 'patch', reason: 'FieldValueInvalid' });
    expect(res.body.message).toContain('cannot parse ".500Z" as ".000000"');
  });

  it('answers 400 to a replace with a string where an int32 goes', async () => {
    const made = await api.call('POST', LEASES, lease({ leaseDurationSeconds: 300 }));

    const res = await api.call('PUT', `${LEASES}/l1`, {
      ...made.body,
      spec: { leaseDurationSeconds: '300' },
    });

    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
  });

  it('takes metav1.Time with a fraction and drops the fraction, as the real server stores it', async () => {
    const res = await api.call(
      'POST',
      '/api/v1/nodes',
      node('n1', {
        spec: { taints: [{ key: 'k', effect: 'NoSchedule', timeAdded: '2026-11-28T01:00:00.123Z' }] },
      }),
    );

    expect(res.status).toBe(201);
    expect(res.body.spec.taints[0].timeAdded).toBe('2026-11-28T01:00:00Z');
  });

  it('answers 400 to a label or annotation value that is not a string', async () => {
    const label = await api.call('POST', '/api/v1/nodes', {
      metadata: { name: 'n1', labels: { 'drainer.dev/queued': 1700000000 } },
    });
    const annotation = await api.call('POST', '/api/v1/nodes', {
      metadata: { name: 'n2', annotations: { 'drainer.dev/state': { phase: 'Queued' } } },
    });

    expect(label.status).toBe(400);
    expect(label.body.message).toBe(
      'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    );
    expect(annotation.status).toBe(400);
    expect(annotation.body.message).toContain(
      'cannot unmarshal object into Go struct field ObjectMeta.metadata.annotations of type string',
    );
  });

  it('answers 422 to a label value that is no label value, and to one too long', async () => {
    await api.call('POST', '/api/v1/nodes', node('n1'));

    const bad = await api.call(
      'PATCH',
      '/api/v1/nodes/n1',
      { metadata: { labels: { 'drainer.dev/queued': '2026-11-28T01:00:00Z' } } },
      'application/merge-patch+json',
    );
    const long = await api.call(
      'PATCH',
      '/api/v1/nodes/n1',
      { metadata: { labels: { a: 'x'.repeat(64) } } },
      'application/merge-patch+json',
    );

    expect(bad.status).toBe(422);
    expect(bad.body.message).toContain(
      'Node "n1" is invalid: metadata.labels: Invalid value: "2026-11-28T01:00:00Z": a valid label must be an empty string or consist of alphanumeric characters',
    );
    expect(long.status).toBe(422);
    expect(long.body.message).toContain('must be no more than 63 characters');
  });

  it('answers 422 to a label key that is not a qualified name', async () => {
    const res = await api.call('POST', '/api/v1/nodes', {
      metadata: { name: 'n1', labels: { 'Bad/Key!': 'x' } },
    });

    expect(res.status).toBe(422);
    expect(res.body.details.causes[0]).toMatchObject({ field: 'metadata.labels' });
  });

  it('takes an Event with metav1.Time stamps of any precision and a 6-digit eventTime', async () => {
    const res = await api.call('POST', '/api/v1/namespaces/default/events', {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Node', name: 'n1' },
      reason: 'R',
      message: 'm',
      type: 'Normal',
      count: 1,
      firstTimestamp: '2026-11-28T01:00:00.999Z',
      lastTimestamp: '2026-11-28T01:00:00Z',
      eventTime: '2026-11-28T01:00:00.999000Z',
    });

    expect(res.status).toBe(201);
    expect(res.body.firstTimestamp).toBe('2026-11-28T01:00:00Z');
    expect(res.body.eventTime).toBe('2026-11-28T01:00:00.999000Z');
  });
});
