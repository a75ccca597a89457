import { afterEach, describe, expect, it } from 'vitest';
import type { OpenStackSandbox, ServerSpec } from '../../../src/sandbox/openstack/index.ts';
import { nova, start, token } from './client.ts';

let os: OpenStackSandbox;
afterEach(async () => {
  await os.close();
});

const servers: ServerSpec[] = [
  { name: 'adm-1', projectId: 'admin', host: 'compute-a' },
  { name: 'adm-2', projectId: 'admin', host: 'compute-b' },
  { name: 'demo-1', projectId: 'demo', host: 'compute-a' },
  { name: 'other-1', projectId: 'tenant-x', host: 'compute-a', status: 'SHUTOFF' },
  { name: 'other-2', projectId: 'tenant-x', host: 'compute-a', locked: true },
];
const names = (body: { servers: { name: string }[] }): string[] => body.servers.map((s) => s.name);

describe('sandbox Nova servers', () => {
  it('pages servers/detail by limit and marker with a servers_links "next" while pages are full', async () => {
    os = await start({ servers, maxLimit: 2 });
    const t = await token(os);

    const seen: string[] = [];
    let url: string | undefined = '/servers/detail?all_tenants=1';
    let pages = 0;
    while (url) {
      const res = await nova(os, 'GET', url, { token: t });
      expect(res.status).toBe(200);
      seen.push(...names(res.body));
      url = res.body.servers_links?.find((l: { rel: string }) => l.rel === 'next')?.href;
      pages++;
    }

    expect(seen).toEqual(['other-2', 'other-1', 'demo-1', 'adm-2', 'adm-1']);
    expect(pages).toBe(3);
  });

  it('keeps the filters in the next link and rejects an unknown marker', async () => {
    os = await start({ servers });
    const t = await token(os);

    const first = await nova(os, 'GET', '/servers/detail?all_tenants=1&host=compute-a&limit=1', { token: t });
    const bad = await nova(os, 'GET', '/servers/detail?all_tenants=1&marker=nope', { token: t });

    expect(first.body.servers_links[0].href).toBe(
      `${os.computeUrl}/servers/detail?all_tenants=1&host=compute-a&limit=1&marker=${first.body.servers[0].id}`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.badRequest.message).toBe('marker [nope] not found');
  });

  it('shows an admin only its own project unless all_tenants is given', async () => {
    os = await start({ servers });
    const t = await token(os);

    const own = await nova(os, 'GET', '/servers/detail', { token: t });
    const off = await nova(os, 'GET', '/servers/detail?all_tenants=0', { token: t });
    const all = await nova(os, 'GET', '/servers/detail?all_tenants=1&host=compute-a', { token: t });

    expect(names(own.body)).toEqual(['adm-2', 'adm-1']);
    expect(names(off.body)).toEqual(['adm-2', 'adm-1']);
    expect(names(all.body)).toEqual(['other-2', 'other-1', 'demo-1', 'adm-1']);
  });

  it('forbids all_tenants to a non-admin and ignores its host filter', async () => {
    os = await start({ servers });
    const demo = await token(os, 'demo');

    const all = await nova(os, 'GET', '/servers/detail?all_tenants=1', { token: demo });
    const host = await nova(os, 'GET', '/servers/detail?host=compute-b', { token: demo });

    expect(all.status).toBe(403);
    expect(all.body.forbidden.message).toBe(
      "Policy doesn't allow os_compute_api:servers:detail:get_all_tenants to be performed.",
    );
    expect(names(host.body)).toEqual(['demo-1']);
    expect(host.body.servers[0]['OS-EXT-SRV-ATTR:host']).toBeUndefined();
  });

  it('filters by status and shows host, hypervisor, states, tenant and lock for admins', async () => {
    os = await start({
      servers,
      hosts: [{ name: 'compute-a', hypervisorHostname: 'compute-a.cloud' }, { name: 'compute-b' }],
    });
    const t = await token(os);

    const off = await nova(os, 'GET', '/servers/detail?all_tenants=1&status=SHUTOFF', {
      token: t,
      version: '2.93',
    });
    const locked = await nova(os, 'GET', '/servers/detail?all_tenants=1&name=other-2', {
      token: t,
      version: '2.93',
    });

    expect(names(off.body)).toEqual(['other-1']);
    expect(off.body.servers[0]).toMatchObject({
      status: 'SHUTOFF',
      tenant_id: 'tenant-x',
      'OS-EXT-SRV-ATTR:host': 'compute-a',
      'OS-EXT-SRV-ATTR:hypervisor_hostname': 'compute-a.cloud',
      'OS-EXT-STS:vm_state': 'stopped',
      'OS-EXT-STS:task_state': null,
      locked: false,
    });
    expect(locked.body.servers[0].locked).toBe(true);
  });

  it('hides another project server from a non-admin with 404', async () => {
    os = await start({ servers: [{ id: 'srv-1', name: 'a', projectId: 'admin', host: 'compute-a' }] });
    const demo = await token(os, 'demo');
    const admin = await token(os);

    const hidden = await nova(os, 'GET', '/servers/srv-1', { token: demo });
    const shown = await nova(os, 'GET', '/servers/srv-1', { token: admin });

    expect(hidden.status).toBe(404);
    expect(hidden.body.itemNotFound.message).toBe('Instance srv-1 could not be found.');
    expect(shown.body.server.name).toBe('a');
  });
});
