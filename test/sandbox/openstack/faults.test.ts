import { afterEach, describe, expect, it } from 'vitest';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { liveMigrate, nova, start, token } from './client.ts';

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

const two = {
  servers: [
    { name: 'vm-1', projectId: 'demo', host: 'compute-a' },
    { name: 'vm-2', projectId: 'demo', host: 'compute-a' },
  ],
};
const names = (a: { body: { servers: { name: string }[] } }) => a.body.servers.map((s) => s.name).sort();

describe('sandbox Nova faults of issue 23', () => {
  it('a policy that hides the host leaves OS-EXT-SRV-ATTR:* out of every server, admin included', async () => {
    os = await start(two);
    const t = await token(os);

    const shown = await nova(os, 'GET', '/servers/detail?all_tenants=1', { token: t, version: '2.53' });
    os.faults.hideHost = true;
    const hidden = await nova(os, 'GET', '/servers/detail?all_tenants=1&host=compute-a', {
      token: t,
      version: '2.53',
    });

    expect(shown.body.servers[0]).toHaveProperty('OS-EXT-SRV-ATTR:host', 'compute-a');
    expect(names(hidden)).toEqual(['vm-1', 'vm-2']);
    for (const s of hidden.body.servers as Record<string, unknown>[])
      expect(Object.keys(s).filter((k) => k.startsWith('OS-EXT-SRV-ATTR:'))).toEqual([]);
  });

  it("stamps a server's `updated` by a clock running ahead, and changes-since goes by that stamp", async () => {
    os = await start({ ...two, faults: { clockAheadMs: (id) => (id === 'fast-1' ? 600_000 : 0) } });
    const t = await token(os);
    os.state.addServer({ id: 'fast-1', name: 'fast', projectId: 'demo', host: 'compute-b' });

    const all = await nova(os, 'GET', '/servers/detail?all_tenants=1', { token: t });
    const novaNow = Date.parse(all.headers.get('date')!);
    const since = new Date(novaNow + 300_000).toISOString();
    const ahead = await nova(os, 'GET', `/servers/detail?all_tenants=1&changes-since=${since}`, { token: t });

    const fast = (all.body.servers as { name: string; updated: string }[]).find((s) => s.name === 'fast')!;
    expect(Date.parse(fast.updated) - novaNow).toBeGreaterThan(590_000);
    expect(names(ahead)).toEqual(['fast']);
  });

  it('applies a POST whose answer it drops: the client sees a reset, the migration runs', async () => {
    os = await start(two);
    const t = await token(os);
    const [vm] = os.state.servers();
    os.faults.dropAnswer = (method, path) => method === 'POST' && path.endsWith(`/servers/${vm!.id}/action`);

    const sent = nova(os, 'POST', `/servers/${vm!.id}/action`, {
      token: t,
      version: '2.53',
      body: liveMigrate(),
    });

    await expect(sent).rejects.toThrow();
    expect(os.state.migrateCalls(vm!.id)).toBe(1);
    expect(os.state.server(vm!.id)?.taskState).toBe('migrating');
  });
});
