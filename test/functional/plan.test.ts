// `drainer plan` and host mapping: what would move, by which action, without touching anything.
import { describe, expect, it } from 'vitest';
import { tail } from './support/cli.ts';
import { useCli } from './support/cli-world.ts';
import { computeService, getServer, migrationsOf } from './support/nova.ts';
import { novaPlugin, plan } from './support/nova-plugin.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();
const cli = useCli(world);

const EXPECTED_ACTION = { ACTIVE: 'live-migrate', PAUSED: 'live-migrate', SHUTOFF: 'cold-migrate' } as const;

describe('drainer plan against a real Nova', () => {
  it('lists every server of every project with its action and changes nothing', async () => {
    const w = world();
    const source = w.settings.sourceHost;
    const other = await w.secondProject();
    const servers = await w.boot([
      { label: 'pl-active' },
      { label: 'pl-paused', state: 'PAUSED', as: other },
      { label: 'pl-shutoff', state: 'SHUTOFF' },
    ]);

    const planned = await plan(await novaPlugin(w.cloud), source);
    const printed = await cli().drainer(['plan', '--node', source]);

    expect(planned.location).toBe(source);
    for (const s of servers) {
      const item = planned.workloads.find((x) => x.id === s.id);
      expect({ state: item?.state, action: item?.action, owner: item?.owner }).toEqual({
        state: s.status,
        action: EXPECTED_ACTION[s.status as keyof typeof EXPECTED_ACTION],
        owner: s.projectId,
      });
    }
    expect(printed.code, tail(printed)).toBe(0);
    for (const s of servers) {
      const line = printed.stdout.split('\n').find((l) => l.includes(s.name) || l.includes(s.id));
      expect(line, `plan output names ${s.name}:\n${printed.stdout}`).toBeDefined();
      expect(line).toContain(EXPECTED_ACTION[s.status as keyof typeof EXPECTED_ACTION]);
    }
    for (const s of servers) {
      const now = await getServer(w.admin, s.id);
      expect([now?.host, now?.status]).toEqual([source, s.status]);
      expect(await migrationsOf(w.admin, s.id)).toEqual([]);
    }
    const svc = await computeService(w.admin, source);
    expect([svc.status, svc.disabledReason]).toEqual(['enabled', null]);
  });

  it('maps node compute-a.example.org to service host compute-a by its short name', async () => {
    const w = world();
    const source = w.settings.sourceHost;
    const node = `${source}.example.org`;
    const [server] = await w.boot([{ label: 'pl-fqdn' }]);

    const planned = await plan(await novaPlugin(w.cloud), node);
    const printed = await cli().drainer(['plan', '--node', node]);

    expect(planned.location).toBe(source);
    expect(planned.workloads.map((x) => x.id)).toContain(server!.id);
    expect(printed.code, tail(printed)).toBe(0);
    expect(printed.stdout).toContain(server!.name);
  });
});
