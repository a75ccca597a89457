import nock from 'nock';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  OutcomeUnknownError,
  TransientError,
} from '../../../src/errors.ts';
import { createHttp } from '../../../src/plugins/nova/http.ts';
import { FakeClock, offlineNock } from './helpers.ts';

const NOVA = 'http://nova.test';

function client() {
  const clock = new FakeClock();
  const codes: string[] = [];
  const http = createHttp({
    timeoutMs: 5000,
    sleep: clock.sleep,
    backoffMs: 100,
    retries: 3,
    onApiRequest: (_api, code) => codes.push(code),
  });
  return { http, clock, codes };
}

offlineNock();

describe('nova http layer', () => {
  it('retries 502/503/504 with a doubling backoff and counts every answer', async () => {
    nock(NOVA).get('/x').reply(503).get('/x').reply(502).get('/x').reply(200, { ok: true });
    const { http, clock, codes } = client();

    const res = await http.request({ api: 'nova', method: 'GET', url: `${NOVA}/x` });

    expect(res.body).toEqual({ ok: true });
    expect(clock.sleeps).toEqual([100, 200]);
    expect(codes).toEqual(['503', '502', '200']);
  });

  it('gives up after the retries with a TransientError', async () => {
    nock(NOVA).get('/x').times(4).reply(504);
    const { http } = client();
    await expect(http.request({ api: 'nova', method: 'GET', url: `${NOVA}/x` })).rejects.toBeInstanceOf(
      TransientError,
    );
  });

  it('retries connection errors', async () => {
    nock(NOVA)
      .get('/x')
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))
      .get('/x')
      .reply(200, {});
    const { http, codes } = client();
    await http.request({ api: 'nova', method: 'GET', url: `${NOVA}/x` });
    expect(codes).toEqual(['ECONNRESET', '200']);
  });

  it('never re-sends a POST whose answer was lost (reset or 502/503/504): the outcome is unknown', async () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    nock(NOVA).post('/a').replyWithError(reset).post('/b').reply(503);
    const { http, clock, codes } = client();

    const lost = await http
      .request({ api: 'nova', method: 'POST', url: `${NOVA}/a`, json: {} })
      .catch((e: unknown) => e);
    const gateway = await http
      .request({ api: 'nova', method: 'POST', url: `${NOVA}/b`, json: {} })
      .catch((e: unknown) => e);

    expect(lost).toBeInstanceOf(OutcomeUnknownError);
    expect(gateway).toBeInstanceOf(OutcomeUnknownError);
    expect((gateway as OutcomeUnknownError).status).toBe(503);
    expect(codes).toEqual(['ECONNRESET', '503']);
    expect(clock.sleeps).toEqual([]);
    expect(nock.isDone()).toBe(true);
  });

  it('retries a POST that never reached the server, and one marked idempotent', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    nock(NOVA).post('/a').replyWithError(refused).post('/a').reply(202);
    nock(NOVA).post('/tokens').reply(503).post('/tokens').reply(201, {});
    const { http, codes } = client();

    await http.request({ api: 'nova', method: 'POST', url: `${NOVA}/a`, json: {} });
    await http.request({
      api: 'keystone',
      method: 'POST',
      url: `${NOVA}/tokens`,
      json: {},
      idempotent: true,
    });

    expect(codes).toEqual(['ECONNREFUSED', '202', '503', '201']);
  });

  it('never retries a 4xx', async () => {
    nock(NOVA)
      .post('/a')
      .reply(
        409,
        { conflictingRequest: { code: 409, message: 'in task_state migrating' } },
        { 'x-compute-request-id': 'req-9' },
      );
    const { http, clock } = client();

    const err = await http
      .request({ api: 'nova', method: 'POST', url: `${NOVA}/a`, json: {} })
      .catch((e: unknown) => e);

    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).details).toMatchObject({
      status: 409,
      requestId: 'req-9',
      fault: 'in task_state migrating',
    });
    expect((err as Error).message).toMatch(/in task_state migrating \(request req-9\)/);
    expect(clock.sleeps).toEqual([]);
  });

  it('says admin rights are needed on a 403, with the request id', async () => {
    nock(NOVA)
      .get('/os-services')
      .query(true)
      .reply(
        403,
        { forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-services:list" } },
        { 'x-openstack-request-id': 'req-403' },
      );
    const { http } = client();

    const err = await http
      .request({ api: 'nova', method: 'GET', url: `${NOVA}/os-services`, searchParams: { host: 'h' } })
      .catch((e: unknown) => e);

    expect(err).toBeInstanceOf(ForbiddenError);
    expect((err as Error).message).toMatch(/admin rights needed/);
    expect((err as ForbiddenError).details.requestId).toBe('req-403');
  });

  it('maps 404 to NotFoundError and other errors to ApiError, without query strings', async () => {
    nock(NOVA)
      .get('/gone')
      .reply(404, { itemNotFound: { code: 404, message: 'Instance could not be found' } });
    nock(NOVA)
      .get('/bad')
      .query(true)
      .reply(400, { badRequest: { code: 400, message: 'Invalid input' } });
    const { http } = client();
    await expect(http.request({ api: 'nova', method: 'GET', url: `${NOVA}/gone` })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    const err = (await http
      .request({ api: 'nova', method: 'GET', url: `${NOVA}/bad?marker=secretish` })
      .catch((e: unknown) => e)) as ApiError;
    expect(err.code).toBe('API');
    expect(err.details.url).toBe(`${NOVA}/bad`);
    expect(err.message).not.toMatch(/secretish/);
  });
});
