// `drainer run-once` / `restore` / `plan` as an operator runs them, judged by the real Nova's answers.
import { describe, expect, it } from 'vitest';
import { tail } from './support/cli.ts';
import { useCli } from './support/cli-world.ts';
import { computeService, getServer, migrationsOf, serversOnHost, setService } from './support/nova.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();
const cli = useCli(world);

describe('drainer run-once against a real Nova', () => {
  it('moves six servers of two projects off the host in their original states and disables the service', async () => {
    const w = world();
    const { sourceHost: source, targetHost: target } = w.settings;
    const other = await w.secondProject();
    const servers = await w.boot([
      { label: 'ro-active-1' },
      { label: 'ro-active-2' },
      { label: 'ro-shutoff', state: 'SHUTOFF' },
      { label: 'ro-active-3', as: other },
      { label: 'ro-paused', state: 'PAUSED', as: other },
      { label: 'ro-active-4', as: other },
    ]);

    const run = await cli().drainer(['run-once', '--node', source]);

    expect(run.code, tail(run)).toBe(0);
    for (const before of servers) {
      const after = await getServer(w.admin, before.id);
      expect({ name: after?.name, host: after?.host, status: after?.status, task: after?.taskState }).toEqual(
        {
          name: before.name,
          host: target,
          status: before.status,
          task: null,
        },
      );
      const done = (await migrationsOf(w.admin, before.id))[0];
      expect(done?.migrationType).toBe(before.status === 'SHUTOFF' ? 'migration' : 'live-migration');
      expect(done?.status).toBe(before.status === 'SHUTOFF' ? 'confirmed' : 'completed');
    }
    const ours = new Set(servers.map((s) => s.id));
    expect((await serversOnHost(w.admin, source)).filter((s) => ours.has(s.id))).toEqual([]);
    const svc = await computeService(w.admin, source);
    expect(svc.status).toBe('disabled');
    expect(svc.disabledReason).toMatch(/^drainer:/);

    const restored = await cli().drainer(['restore', '--node', source]);

    expect(restored.code, tail(restored)).toBe(0);
    expect((await computeService(w.admin, source)).status).toBe('enabled');
  });

  it('evacuates a host disabled by hand but leaves it disabled with the operator reason, even on restore', async () => {
    const w = world();
    const source = w.settings.sourceHost;
    const [server] = await w.boot([{ label: 'ro-hand' }]);
    await setService(w.admin, source, false, 'ops: hardware check');

    const run = await cli().drainer(['run-once', '--node', source]);

    expect(run.code, tail(run)).toBe(0);
    expect((await getServer(w.admin, server!.id))?.host).toBe(w.settings.targetHost);
    expect((await computeService(w.admin, source)).disabledReason).toBe('ops: hardware check');

    const restored = await cli().drainer(['restore', '--node', source]);

    expect(restored.code, tail(restored)).toBe(0);
    const svc = await computeService(w.admin, source);
    expect([svc.status, svc.disabledReason]).toEqual(['disabled', 'ops: hardware check']);
  });
});
