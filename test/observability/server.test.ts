import { afterEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.ts';
import { type HealthServer, type Readiness, startHealthServer } from '../../src/observability/server.ts';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(ready: () => Readiness, metrics?: Metrics) {
  server = await startHealthServer({ port: 0, host: '127.0.0.1', ready, ...(metrics ? { metrics } : {}) });
  return (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${server!.port}${path}`, init);
}

describe('health server', () => {
  it('answers /healthz with 200 whatever the readiness', async () => {
    const get = await start(() => false);
    const res = await get('/healthz');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok\n');
  });

  it('answers /readyz with 503 and the reasons until ready, then 200', async () => {
    let state: Readiness = { ready: false, reasons: ['node watch not synced', 'keystone unreachable'] };
    const get = await start(() => state);
    const notReady = await get('/readyz');
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({
      ready: false,
      reasons: ['node watch not synced', 'keystone unreachable'],
    });
    state = true;
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, reasons: [] });
  });

  it('serves the Prometheus text of its metrics on /metrics', async () => {
    const metrics = new Metrics();
    metrics.apiRequest('nova', '503');
    const get = await start(() => true, metrics);
    const res = await get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toContain('drainer_api_requests_total{api="nova",code="503"} 1');
  });

  it('answers 404 for unknown paths and 405 for writes', async () => {
    const get = await start(() => true);
    expect((await get('/nope')).status).toBe(404);
    expect((await get('/healthz', { method: 'POST' })).status).toBe(405);
  });

  it('closes when its signal aborts', async () => {
    const ac = new AbortController();
    const s = await startHealthServer({ port: 0, host: '127.0.0.1', ready: () => true, signal: ac.signal });
    ac.abort();
    await s.close();
    await expect(fetch(`http://127.0.0.1:${s.port}/healthz`)).rejects.toThrow();
  });
});
