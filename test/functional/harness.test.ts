// The harness itself against the real cloud: if these fail, the scenarios' verdicts mean nothing.
import { describe, expect, it } from 'vitest';
import { Cleanup } from './support/cleanup.ts';
import { startKeystoneProxy } from './support/keystone-proxy.ts';
import { computeService, setService } from './support/nova.ts';
import { Session } from './support/session.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();

describe('functional harness', () => {
  it('boots servers pinned to the source host in two projects, in the states asked for', async () => {
    const w = world();
    const other = await w.secondProject();
    const servers = await w.boot([
      { label: 'h-active' },
      { label: 'h-paused', state: 'PAUSED', as: other },
      { label: 'h-shutoff', state: 'SHUTOFF' },
    ]);
    expect(servers.map((s) => [s.status, s.host])).toEqual([
      ['ACTIVE', w.settings.sourceHost],
      ['PAUSED', w.settings.sourceHost],
      ['SHUTOFF', w.settings.sourceHost],
    ]);
    expect(servers[1]!.projectId).toBe(other.projectId);
    expect(servers[0]!.projectId).not.toBe(other.projectId);
  });

  it('runs every cleanup step even when one fails, and reports the failure', async () => {
    const cleanup = new Cleanup();
    const ran: string[] = [];
    cleanup.add('first', async () => ran.push('first'));
    cleanup.add('broken', async () => {
      throw new Error('boom');
    });
    cleanup.add('last', async () => ran.push('last'));
    await expect(cleanup.run()).rejects.toThrow(/cleanup "broken" failed: boom/);
    expect(ran).toEqual(['last', 'first']);
  });

  it('disables a compute service by hand with a reason (re-enabled after the test)', async () => {
    const w = world();
    const svc = await setService(w.admin, w.settings.targetHost, false, 'ft: by hand');
    expect([svc.status, svc.disabledReason]).toEqual(['disabled', 'ft: by hand']);
    expect((await computeService(w.admin, w.settings.sourceHost)).status).toBe('enabled');
  });

  it('gets a real 401 from Nova for the first token the Keystone proxy hands out, and a good one on re-auth', async () => {
    const w = world();
    const proxy = await startKeystoneProxy(w.admin, 1);
    w.cleanup.add('keystone proxy', () => proxy.close());

    const s = await Session.open({ ...w.cloud, auth: { ...w.cloud.auth, authUrl: proxy.authUrl } });
    const first = s.token;
    const res = await s.request('compute', 'GET', '/flavors');

    expect(res.status).toBe(200);
    expect(proxy.issued).toHaveLength(2);
    expect(proxy.issued[0]).toBe(first);
    expect(s.token).toBe(proxy.issued[1]);
  });
});
