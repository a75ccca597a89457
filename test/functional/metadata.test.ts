// The sandbox's server metadata API against the real Nova: the same calls, at the oldest and the
// newest microversion, must get the same status codes and the same bodies (server ids aside).
// drainer reads a server's way out from this metadata (drainer.dev:maintenance), so plan and the
// e2e tests read it the way the agent will.
import { describe, expect, it } from 'vitest';
import { startOpenStack } from '../../src/sandbox/openstack/index.ts';
import { ScaledClock } from '../../src/sandbox/clock.ts';
import type { CloudEnv } from './support/cloud-env.ts';
import { MAINTENANCE_KEY } from '../../src/plugins/nova/policy.ts';
import { getServer, migrationsOf } from './support/nova.ts';
import { sandboxCloud } from './support/sandbox-cloud.ts';
import { evacuate, novaPlugin, plan, restore } from './support/nova-plugin.ts';
import { http, Session } from './support/session.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();

interface Seen {
  call: string;
  status: number;
  body: unknown;
}

/** Every kind of metadata answer drainer or an owner can meet; the server starts with none. */
async function script(cloud: CloudEnv, server: string, newest: string): Promise<Seen[]> {
  const s = await Session.open(cloud);
  const seen: Seen[] = [];
  const calls: [string, 'GET' | 'POST' | 'PUT' | 'DELETE', string, unknown?][] = [
    ['set all', 'PUT', '', { metadata: { a: '1' } }],
    ['list', 'GET', ''],
    ['merge', 'POST', '', { metadata: { 'drainer.dev:maintenance': 'cold', b: '2' } }],
    ['slash key', 'POST', '', { metadata: { 'drainer.dev/maintenance': 'cold' } }],
    ['show', 'GET', '/drainer.dev:maintenance'],
    ['show missing', 'GET', '/nope'],
    ['set one', 'PUT', '/b', { meta: { b: '3' } }],
    ['set one, other key', 'PUT', '/b', { meta: { c: '3' } }],
    ['set one, two keys', 'PUT', '/b', { meta: { b: '3', c: '4' } }],
    ['set one, none', 'PUT', '/a', { meta: {} }],
    ['not a string', 'POST', '', { metadata: { k: 5 } }],
    ['extra field', 'POST', '', { metadata: { k: 'v' }, x: 1 }],
    ['no metadata', 'POST', '', {}],
    ['too long', 'POST', '', { metadata: { v: 'x'.repeat(256) } }],
    ['empty value', 'POST', '', { metadata: { v: '' } }],
    [
      'over quota',
      'POST',
      '',
      { metadata: Object.fromEntries([...Array(129).keys()].map((i) => [`k${i}`, 'v'])) },
    ],
    ['delete', 'DELETE', '/v'],
    ['delete again', 'DELETE', '/v'],
    ['replace', 'PUT', '', { metadata: { only: 'this' } }],
    ['list after', 'GET', ''],
  ];
  for (const mv of ['2.1', newest]) {
    for (const [call, method, path, json] of calls) {
      const res = await s.request('compute', method, `/servers/${server}/metadata${path}`, {
        microversion: mv,
        ...(json === undefined ? {} : { json }),
      });
      seen.push({
        call: `${call} ${mv}`,
        status: res.status,
        body: JSON.parse(JSON.stringify(res.body ?? null).replaceAll(server, '<server>')),
      });
    }
  }
  const missing = await s.request('compute', 'GET', '/servers/00000000-0000-0000-0000-000000000000/metadata');
  seen.push({ call: 'no such server', status: missing.status, body: missing.body });
  const detail = await s.request('compute', 'GET', `/servers/${server}`, { microversion: newest });
  seen.push({ call: 'server shows it', status: detail.status, body: detail.body?.server?.metadata });
  return seen;
}

describe('contract: server metadata in the sandbox Nova answers like the real Nova', () => {
  it('gives the same status codes and bodies for every metadata call, at 2.1 and the newest microversion', async () => {
    const w = world();
    const computeUrl = w.admin.endpoint('compute');
    const doc = JSON.parse((await http.get(computeUrl.replace(/\/+$/, '') + '/')).body) as {
      version: { version: string };
    };
    const newest = doc.version.version;
    const [server] = await w.boot([{ label: 'md' }]);
    const real = await script(w.cloud, server!.id, newest);

    const os = await startOpenStack({
      clock: new ScaledClock(1),
      host: '127.0.0.1',
      port: 0,
      hosts: [{ name: w.settings.sourceHost }],
      servers: [{ id: 'md', name: 'md', projectId: 'admin', host: w.settings.sourceHost }],
    });
    w.cleanup.add('sandbox openstack', () => os.close());
    const emulated = await script(sandboxCloud(os), 'md', newest);

    expect(emulated).toEqual(real);
  });
});

describe('the way out set in a real Nova server metadata, as the agent reads it', () => {
  it('plans cold for a server its owner tagged cold, moves it stopped and it runs again on the other host', async () => {
    const w = world();
    const [tagged, plain] = await w.boot([{ label: 'md-cold' }, { label: 'md-live' }]);
    const set = await w.admin.request(
      'compute',
      'PUT',
      `/servers/${tagged!.id}/metadata/${MAINTENANCE_KEY}`,
      {
        json: { meta: { [MAINTENANCE_KEY]: 'cold' } },
      },
    );
    const plugin = await novaPlugin(w.cloud);

    const planned = await plan(plugin, w.settings.sourceHost);
    const { outcome, record } = await evacuate(plugin, w.settings.sourceHost);

    expect(set.status).toBe(200);
    const line = (id: string) => planned.workloads.find((x) => x.id === id);
    expect([line(tagged!.id)?.action, line(tagged!.id)?.why]).toEqual([
      'cold-migrate',
      `metadata ${MAINTENANCE_KEY}=cold: Nova stops it, moves it and starts it on the new host; drainer then confirms the resize, which frees the old host`,
    ]);
    expect([line(plain!.id)?.action, line(plain!.id)?.why]).toEqual(['live-migrate', 'default']);
    expect(outcome.succeeded, JSON.stringify(outcome)).toBe(true);
    const after = await getServer(w.admin, tagged!.id);
    expect([after?.host, after?.status]).toEqual([w.settings.targetHost, 'ACTIVE']);
    expect((await migrationsOf(w.admin, tagged!.id)).map((m) => m.migrationType)).toEqual(['migration']);
    await restore(plugin, w.settings.sourceHost, record);
  });
});
