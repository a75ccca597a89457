import { afterEach, describe, expect, it } from 'vitest';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { nova, start, token } from './client.ts';

let os: OpenStackSandbox;
afterEach(async () => {
  await os.close();
});

async function statuses(sandbox: OpenStackSandbox, t: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await nova(sandbox, 'GET', '/os-services', { token: t })).status);
  return out;
}

describe('sandbox Nova faults', () => {
  it('answers the configured share of requests with 503, repeatably for a seed', async () => {
    os = await start({ seed: 7 });
    const t = await token(os);
    os.faults.errorRate = 0.5;

    const first = await statuses(os, t, 40);
    await os.close();
    os = await start({ seed: 7 });
    const t2 = await token(os);
    os.faults.errorRate = 0.5;
    const second = await statuses(os, t2, 40);

    expect(first).toEqual(second);
    expect(first.filter((s) => s === 503).length).toBeGreaterThan(5);
    expect(first.filter((s) => s === 200).length).toBeGreaterThan(5);
  });

  it('answers 503 in Nova shape while errorRate is 1 and recovers when it is reset', async () => {
    os = await start();
    const t = await token(os);

    os.faults.errorRate = 1;
    const failed = await nova(os, 'GET', '/os-services', { token: t });
    os.faults.errorRate = 0;
    const ok = await nova(os, 'GET', '/os-services', { token: t });

    expect(failed.status).toBe(503);
    expect(failed.body.serviceUnavailable.code).toBe(503);
    expect(ok.status).toBe(200);
  });

  it('logs each request with its path, status and microversion', async () => {
    os = await start();
    const t = await token(os);

    await nova(os, 'GET', '/os-services?binary=nova-compute', { token: t, version: '2.53' });

    expect(os.requestLog.at(-1)).toMatchObject({
      method: 'GET',
      path: '/compute/v2.1/os-services?binary=nova-compute',
      status: 200,
      microversion: '2.53',
    });
    expect(os.requestLog[0]).toMatchObject({ method: 'POST', path: '/v3/auth/tokens', status: 201 });
  });
});
