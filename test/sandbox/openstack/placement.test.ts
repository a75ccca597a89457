// The sandbox Placement: providers named by hypervisor hostname, inventories with Nova's initial
// allocation ratios, usages that follow the servers (also through a live migration), and the
// real service's answers to a missing token, an unknown provider and a bad microversion.
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { liveMigrate, nova, start, token, until, type Answer } from './client.ts';

let os: OpenStackSandbox | undefined;
afterEach(async () => {
  await os?.close();
  os = undefined;
});

async function placement(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${os!.placementUrl}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const v139 = (t: string) => ({ 'X-Auth-Token': t, 'OpenStack-API-Version': 'placement 1.39' });

describe('sandbox Placement', () => {
  it('lists one provider per hypervisor, with inventories and usages that follow a live migration', async () => {
    os = await start({
      hosts: [
        { name: 'compute-a', hypervisorHostname: 'compute-a.example.org', vcpus: 8, ramMb: 32768 },
        { name: 'compute-b', vcpus: 8, ramMb: 32768 },
      ],
      servers: [{ name: 'vm-1', projectId: 'demo', host: 'compute-a', vcpus: 2, ramMb: 4096, diskGb: 20 }],
    });
    const t = await token(os);
    const root = await placement('');
    expect(root.body.versions[0]).toMatchObject({ id: 'v1.0', max_version: '1.39', min_version: '1.0' });

    const list = await placement('/resource_providers', v139(t));
    expect(list.headers.get('openstack-api-version')).toBe('placement 1.39');
    const rps = list.body.resource_providers as { uuid: string; name: string }[];
    expect(rps.map((r) => r.name)).toEqual(['compute-a.example.org', 'compute-b']);
    const [a, b] = rps;

    const inv = await placement(`/resource_providers/${a!.uuid}/inventories`, v139(t));
    expect(inv.body.inventories.VCPU).toEqual({
      total: 8,
      reserved: 0,
      min_unit: 1,
      max_unit: 8,
      step_size: 1,
      allocation_ratio: 4.0,
    });
    expect(inv.body.inventories.MEMORY_MB).toMatchObject({
      total: 32768,
      reserved: 512,
      allocation_ratio: 1.0,
    });
    const usages = async (uuid: string) =>
      (await placement(`/resource_providers/${uuid}/usages`, v139(t))).body.usages;
    expect(await usages(a!.uuid)).toEqual({ VCPU: 2, MEMORY_MB: 4096, DISK_GB: 20 });
    expect(await usages(b!.uuid)).toEqual({ VCPU: 0, MEMORY_MB: 0, DISK_GB: 0 });

    const id = os.state.servers()[0]!.id;
    const moved = await nova(os, 'POST', `/servers/${id}/action`, {
      token: t,
      version: '2.93',
      body: liveMigrate(),
    });
    expect(moved.status).toBe(202);
    await until(() => (os!.state.server(id)?.host === 'compute-b' ? true : undefined), 'the move');

    expect(await usages(a!.uuid)).toEqual({ VCPU: 0, MEMORY_MB: 0, DISK_GB: 0 });
    expect(await usages(b!.uuid)).toEqual({ VCPU: 2, MEMORY_MB: 4096, DISK_GB: 20 });
  });

  it('answers 401 without a token, 404 for an unknown provider, 406 and 400 for bad microversions', async () => {
    os = await start();
    const t = await token(os);
    expect((await placement('/resource_providers')).status).toBe(401);
    const unknown = await placement('/resource_providers/nope/usages', v139(t));
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0]).toMatchObject({ status: 404, title: 'Not Found' });
    const tooNew = await placement('/resource_providers', {
      'X-Auth-Token': t,
      'OpenStack-API-Version': 'placement 1.999',
    });
    expect(tooNew.status).toBe(406);
    expect(tooNew.body.errors[0]).toMatchObject({ max_version: '1.39', min_version: '1.0' });
    const bad = await placement('/resource_providers', {
      'X-Auth-Token': t,
      'OpenStack-API-Version': 'placement abc',
    });
    expect(bad.status).toBe(400);
    const plain = await placement('/resource_providers', { 'X-Auth-Token': t });
    expect(plain.headers.get('openstack-api-version')).toBe('placement 1.0');
    expect(Object.keys(plain.body.resource_providers[0]).sort()).toEqual([
      'generation',
      'links',
      'name',
      'uuid',
    ]);
  });

  it('is absent from the catalog when the cloud is started without it', async () => {
    os = await start({ placement: false });
    expect(os.placementUrl).toBeUndefined();
  });
});
