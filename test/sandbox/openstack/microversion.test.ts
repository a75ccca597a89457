import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { nova, start, token } from './client.ts';

let os: OpenStackSandbox;
let t: string;
beforeEach(async () => {
  os = await start({ maxMicroversion: '2.90' });
  t = await token(os);
});
afterEach(async () => {
  await os.close();
});

describe('sandbox Nova microversions', () => {
  it('serves the version document at the compute root without a token', async () => {
    const root = os.computeUrl.replace(/\/v2\.1$/, '');

    const res = await fetch(`${root}/`);
    const body = (await res.json()) as { versions: { id: string; version: string; min_version: string }[] };

    expect(res.status).toBe(200);
    expect(body.versions.find((v) => v.id === 'v2.1')).toMatchObject({ version: '2.90', min_version: '2.1' });
  });

  it('answers 2.1 when the client names no version, and echoes it', async () => {
    const res = await nova(os, 'GET', '/os-services', { token: t });

    expect(res.status).toBe(200);
    expect(res.headers.get('openstack-api-version')).toBe('compute 2.1');
    expect(res.headers.get('x-openstack-nova-api-version')).toBe('2.1');
    expect(res.headers.get('vary')).toContain('OpenStack-API-Version');
    expect(typeof res.body.services[0].id).toBe('number');
  });

  it('honours the legacy X-OpenStack-Nova-API-Version header and "latest"', async () => {
    const legacy = await nova(os, 'GET', '/os-services', {
      token: t,
      headers: { 'X-OpenStack-Nova-API-Version': '2.53' },
    });
    const latest = await nova(os, 'GET', '/os-services', { token: t, version: 'latest' });

    expect(legacy.headers.get('openstack-api-version')).toBe('compute 2.53');
    expect(typeof legacy.body.services[0].id).toBe('string');
    expect(latest.headers.get('openstack-api-version')).toBe('compute 2.90');
  });

  it('answers 406 with Nova message for a version above the maximum', async () => {
    const res = await nova(os, 'GET', '/os-services', { token: t, version: '2.91' });

    expect(res.status).toBe(406);
    expect(res.headers.get('openstack-api-version')).toBe('compute 2.91');
    expect(res.body).toEqual({
      computeFault: {
        code: 406,
        message: 'Version 2.91 is not supported by the API. Minimum is 2.1 and maximum is 2.90.',
      },
    });
  });

  it('answers 400 for a version string that is not MAJOR.MINOR', async () => {
    const res = await nova(os, 'GET', '/os-services', { token: t, version: 'abc' });

    expect(res.status).toBe(400);
    expect(res.body.badRequest.message).toBe(
      'API Version String abc is of invalid format. Must be of format MajorNum.MinorNum.',
    );
  });
});
