import nock from 'nock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ComputeClient } from '../../../src/plugins/nova/compute.ts';
import { createHttp } from '../../../src/plugins/nova/http.ts';
import { KeystoneSession } from '../../../src/plugins/nova/keystone.ts';
import { negotiate, versionRoot } from '../../../src/plugins/nova/microversion.ts';
import { COMPUTE, FakeNova } from './fake-nova.ts';
import { FakeClock, offlineNock, openstackConfig } from './helpers.ts';

let fake: FakeNova;
offlineNock();
beforeEach(() => {
  fake = new FakeNova();
  fake.install();
});

function compute(cap?: string) {
  const clock = new FakeClock();
  const http = createHttp({ timeoutMs: 5000, sleep: clock.sleep });
  const session = new KeystoneSession({ openstack: openstackConfig(), http, now: clock.now });
  return new ComputeClient({ http, session, maxMicroversion: cap });
}

describe('microversion negotiation', () => {
  it.each([
    ['2.1', undefined, '2.1'],
    ['2.25', undefined, '2.25'],
    ['2.53', undefined, '2.53'],
    ['2.90', undefined, '2.90'],
    ['2.90', '2.60', '2.60'],
    ['2.53', '2.60', '2.53'],
    ['2.200', undefined, '2.100'],
  ])('server max %s, cap %s → %s', async (serverMax, cap, expected) => {
    fake.maxMicroversion = serverMax;
    const c = compute(cap);

    await c.listServices('compute-a');

    expect(c.microversion).toBe(expected);
    const call = fake.requests.find((r) => r.path.endsWith('/os-services'));
    expect(call?.microversion).toBe(expected);
  });

  it('treats a server without microversions as 2.1', () => {
    expect(negotiate(undefined)).toBe(1);
    expect(negotiate('')).toBe(1);
  });

  it('reads the version document from the version root, not the project-scoped endpoint', () => {
    expect(versionRoot('http://nova:8774/v2.1/4f1c0a')).toBe('http://nova:8774/v2.1');
    expect(versionRoot('http://nova:8774/v2.1/')).toBe('http://nova:8774/v2.1');
    expect(versionRoot('https://cloud/compute/v2.1')).toBe('https://cloud/compute/v2.1');
  });

  it('asks for the version document without a token', async () => {
    const c = compute();
    await c.init();
    const versionCall = fake.requests.find((r) => r.path === '/v2.1');
    expect(versionCall).toBeDefined();
  });
});

describe('services', () => {
  it('disables and enables by UUID from 2.53', async () => {
    const c = compute();
    const [svc] = await c.listServices('compute-a');

    await c.disableService(svc!, 'drainer: test');
    expect(fake.service('compute-a')).toMatchObject({ status: 'disabled', disabled_reason: 'drainer: test' });
    await c.enableService(svc!);

    expect(fake.service('compute-a').status).toBe('enabled');
    expect(fake.requests.filter((r) => r.method === 'PUT').map((r) => [r.path, r.body])).toEqual([
      ['/v2.1/os-services/svc-uuid-compute-a', { status: 'disabled', disabled_reason: 'drainer: test' }],
      ['/v2.1/os-services/svc-uuid-compute-a', { status: 'enabled' }],
    ]);
  });

  it('uses disable-log-reason and enable before 2.53', async () => {
    fake.maxMicroversion = '2.52';
    const c = compute();
    const [svc] = await c.listServices('compute-a');
    expect(svc?.id).toBe(100);

    await c.disableService(svc!, 'drainer: test');
    await c.enableService(svc!);

    expect(fake.requests.filter((r) => r.method === 'PUT').map((r) => [r.path, r.body])).toEqual([
      [
        '/v2.1/os-services/disable-log-reason',
        { host: 'compute-a', binary: 'nova-compute', disabled_reason: 'drainer: test' },
      ],
      ['/v2.1/os-services/enable', { host: 'compute-a', binary: 'nova-compute' }],
    ]);
    expect(fake.service('compute-a').status).toBe('enabled');
  });
});

describe('servers', () => {
  it('follows servers_links over 3 pages, on our endpoint, always with all_tenants', async () => {
    for (let i = 0; i < 7; i++)
      fake.addServer({ name: `vm-${i}`, host: 'compute-a', tenant_id: `project-${i % 3}` });
    fake.addServer({ name: 'other-host', host: 'compute-b' });
    fake.pageSize = 3;
    const c = compute();

    const servers = await c.listServersOnHost('compute-a');

    expect(servers.map((s) => s.name)).toEqual(['vm-0', 'vm-1', 'vm-2', 'vm-3', 'vm-4', 'vm-5', 'vm-6']);
    const lists = fake.requests.filter((r) => r.path === '/v2.1/servers/detail');
    expect(lists).toHaveLength(3);
    expect(lists.map((r) => r.query.get('marker'))).toEqual([null, 'srv-003', 'srv-006']);
    expect(
      lists.every((r) => r.query.get('all_tenants') === '1' && r.query.get('host') === 'compute-a'),
    ).toBe(true);
  });

  it('live-migrates with block_migration "auto" from 2.25', async () => {
    const s = fake.addServer({ name: 'web', host: 'compute-a' });
    fake.maxMicroversion = '2.25';
    await compute().liveMigrate(s.id);
    expect(fake.requests.at(-1)?.body).toEqual({ 'os-migrateLive': { host: null, block_migration: 'auto' } });
  });

  it('before 2.25 tries shared storage first, then block migration on the shared-storage 400', async () => {
    const s = fake.addServer({ name: 'web', host: 'compute-a' });
    fake.maxMicroversion = '2.24';
    // Nova's wording for a server with local disks
    const faultBody = {
      badRequest: {
        code: 400,
        message: 'compute-a is not on shared storage: Shared storage live-migration requirement not met.',
      },
    };
    let first: unknown;
    nock.cleanAll();
    nock(new URL(COMPUTE).origin)
      .post(`/v2.1/servers/${s.id}/action`, (b) => ((first = b), true))
      .reply(400, faultBody);
    fake.install();

    await compute().liveMigrate(s.id);

    const bodies = fake.requests
      .filter((r) => r.method === 'POST' && r.path.endsWith('/action'))
      .map((r) => r.body);
    expect(first).toEqual({
      'os-migrateLive': { host: null, block_migration: false, disk_over_commit: false },
    });
    expect(bodies).toEqual([
      { 'os-migrateLive': { host: null, block_migration: true, disk_over_commit: false } },
    ]);
    expect(fake.servers.get(s.id)?.task_state).toBe('migrating');
  });

  it('does not switch to block migration on other 400s', async () => {
    const s = fake.addServer({ name: 'web', host: 'compute-a' });
    fake.maxMicroversion = '2.24';
    nock.cleanAll();
    nock(new URL(COMPUTE).origin)
      .post(`/v2.1/servers/${s.id}/action`)
      .reply(400, { badRequest: { code: 400, message: 'No valid host was found.' } });
    fake.install();

    await expect(compute().liveMigrate(s.id)).rejects.toMatchObject({ code: 'API', status: 400 });
    expect(fake.count('POST', /\/action$/)).toBe(0);
  });

  it('answers an empty list when no hypervisor matches the pattern (Nova says 404)', async () => {
    expect(await compute().listHypervisors('nomatch')).toEqual([]);
  });
});
