import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { nova, start, token } from './client.ts';

let os: OpenStackSandbox;
let t: string;
beforeEach(async () => {
  os = await start({
    hosts: [
      { name: 'compute-a' },
      { name: 'compute-a.example.org' },
      { name: 'compute-b', disabled: { reason: 'old' } },
    ],
  });
  t = await token(os);
});
afterEach(async () => {
  await os.close();
});

describe('sandbox Nova os-services', () => {
  it('filters by binary and host by exact match', async () => {
    const res = await nova(os, 'GET', '/os-services?binary=nova-compute&host=compute-a', { token: t });
    const none = await nova(os, 'GET', '/os-services?host=compute', { token: t });

    expect(res.body.services.map((s: { host: string }) => s.host)).toEqual(['compute-a']);
    expect(none.body.services).toEqual([]);
  });

  it('disables with a reason and enables through the legacy host+binary actions before 2.53', async () => {
    const off = await nova(os, 'PUT', '/os-services/disable-log-reason', {
      token: t,
      body: { host: 'compute-a', binary: 'nova-compute', disabled_reason: 'drainer: node-1' },
    });
    expect(off.status).toBe(200);
    expect(off.body.service).toEqual({
      host: 'compute-a',
      binary: 'nova-compute',
      status: 'disabled',
      disabled_reason: 'drainer: node-1',
    });
    expect(os.state.service('compute-a')).toMatchObject({
      status: 'disabled',
      disabledReason: 'drainer: node-1',
    });

    const on = await nova(os, 'PUT', '/os-services/enable', {
      token: t,
      body: { host: 'compute-a', binary: 'nova-compute' },
    });
    expect(on.body.service).toEqual({ host: 'compute-a', binary: 'nova-compute', status: 'enabled' });
    expect(os.state.service('compute-a')).toMatchObject({ status: 'enabled', disabledReason: null });
  });

  it('requires a reason for disable-log-reason and a known host', async () => {
    const noReason = await nova(os, 'PUT', '/os-services/disable-log-reason', {
      token: t,
      body: { host: 'compute-a', binary: 'nova-compute' },
    });
    const unknown = await nova(os, 'PUT', '/os-services/enable', {
      token: t,
      body: { host: 'nohost', binary: 'nova-compute' },
    });

    expect(noReason.status).toBe(400);
    expect(noReason.body.badRequest.message).toBe('Missing disabled reason field');
    expect(unknown.status).toBe(404);
    expect(unknown.body.itemNotFound.message).toBe("Host 'nohost' is not mapped to any cell");
  });

  it('addresses services by UUID from 2.53 and refuses the legacy actions there', async () => {
    const list = await nova(os, 'GET', '/os-services?binary=nova-compute&host=compute-b', {
      token: t,
      version: '2.53',
    });
    const svc = list.body.services[0];
    expect(svc.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(svc).toMatchObject({ status: 'disabled', disabled_reason: 'old', forced_down: false });

    const on = await nova(os, 'PUT', `/os-services/${svc.id}`, {
      token: t,
      version: '2.53',
      body: { status: 'enabled' },
    });
    const legacy = await nova(os, 'PUT', '/os-services/enable', {
      token: t,
      version: '2.53',
      body: { host: 'compute-b', binary: 'nova-compute' },
    });
    const intId = await nova(os, 'PUT', '/os-services/4', {
      token: t,
      version: '2.53',
      body: { status: 'enabled' },
    });

    expect(on.status).toBe(200);
    expect(on.body.service).toMatchObject({ id: svc.id, status: 'enabled', disabled_reason: null });
    expect(legacy.status).toBe(400);
    expect(legacy.body.badRequest.message).toBe(
      "Additional properties are not allowed ('binary', 'host' were unexpected)",
    );
    expect(intId.status).toBe(400);
    expect(intId.body.badRequest.message).toBe('Invalid uuid 4');
  });

  it('accepts disabled_reason only together with status disabled', async () => {
    const id = os.state.service('compute-a')?.uuid ?? '';
    const put = (body: unknown) => nova(os, 'PUT', `/os-services/${id}`, { token: t, version: '2.53', body });

    const withEnabled = await put({ status: 'enabled', disabled_reason: 'x' });
    const alone = await put({ disabled_reason: 'x' });
    const ok = await put({ status: 'disabled', disabled_reason: 'drainer: n1' });

    expect(withEnabled.status).toBe(400);
    expect(withEnabled.body.badRequest.message).toBe(
      "Specifying 'disabled_reason' with status 'enabled' is invalid.",
    );
    expect(alone.status).toBe(400);
    expect(alone.body.badRequest.message).toBe(
      "No updates were requested. Fields 'status' or 'forced_down' should be specified.",
    );
    expect(ok.status).toBe(200);
    expect(os.state.service('compute-a')).toMatchObject({
      status: 'disabled',
      disabledReason: 'drainer: n1',
    });
  });

  it('forbids non-admin users with Nova policy message', async () => {
    const demo = await token(os, 'demo');

    const res = await nova(os, 'GET', '/os-services', { token: demo });

    expect(res.status).toBe(403);
    expect(res.body.forbidden.message).toBe(
      "Policy doesn't allow os_compute_api:os-services:list to be performed.",
    );
  });
});

describe('sandbox Nova os-hypervisors', () => {
  it('matches hypervisor_hostname_pattern as a substring from 2.53 and answers 404 when none match', async () => {
    const some = await nova(os, 'GET', '/os-hypervisors?hypervisor_hostname_pattern=compute-a', {
      token: t,
      version: '2.53',
    });
    const none = await nova(os, 'GET', '/os-hypervisors/detail?hypervisor_hostname_pattern=zzz', {
      token: t,
      version: '2.53',
    });

    expect(some.body.hypervisors.map((h: { hypervisor_hostname: string }) => h.hypervisor_hostname)).toEqual([
      'compute-a',
      'compute-a.example.org',
    ]);
    expect(none.status).toBe(404);
    expect(none.body.itemNotFound.message).toBe("No hypervisor matching 'zzz' could be found.");
  });

  it('searches by path before 2.53, with integer ids and the service in the detail', async () => {
    const found = await nova(os, 'GET', '/os-hypervisors/example/search', { token: t });
    const detail = await nova(os, 'GET', '/os-hypervisors/detail', { token: t });
    const gone = await nova(os, 'GET', '/os-hypervisors/example/search', { token: t, version: '2.53' });

    expect(found.body.hypervisors).toEqual([
      { id: 2, hypervisor_hostname: 'compute-a.example.org', state: 'up', status: 'enabled' },
    ]);
    expect(detail.body.hypervisors[2].service).toEqual({ id: 5, host: 'compute-b', disabled_reason: 'old' });
    expect(gone.status).toBe(404);
  });
});
