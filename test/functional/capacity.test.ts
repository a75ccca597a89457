// The capacity pre-flight against the real Nova + Placement: with the only other host disabled,
// run-once refuses before its first change; with it enabled, the same run moves everything.
import { describe, expect, it } from 'vitest';
import { tail } from './support/cli.ts';
import { useCli } from './support/cli-world.ts';
import { computeService, getServer, setService } from './support/nova.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();
const cli = useCli(world);

describe('capacity pre-flight against a real Nova and Placement', () => {
  it('refuses with the other host disabled (nothing changed), and moves everything once it is back', async () => {
    const w = world();
    const { sourceHost: source, targetHost: target } = w.settings;
    const servers = await w.boot([{ label: 'cap-1' }, { label: 'cap-2' }]);

    await setService(w.admin, target, false, 'drainer functional test: capacity');
    let refused;
    try {
      refused = await cli().drainer(['run-once', '--node', source]);
    } finally {
      await setService(w.admin, target, true);
    }

    expect(refused.code, tail(refused)).toBe(1);
    expect(refused.stdout).toMatch(/InsufficientCapacity: nova: \d+ of \d+ servers? do(es)? not fit: /);
    for (const s of servers) expect(refused.stdout).toContain(`${s.name} (`);
    expect((await computeService(w.admin, source)).status).toBe('enabled');
    for (const s of servers) {
      const now = await getServer(w.admin, s.id);
      expect({ host: now?.host, status: now?.status }).toEqual({ host: source, status: 'ACTIVE' });
    }

    const run = await cli().drainer(['run-once', '--node', source]);

    expect(run.code, tail(run)).toBe(0);
    for (const s of servers) expect((await getServer(w.admin, s.id))?.host).toBe(target);
    const restored = await cli().drainer(['restore', '--node', source]);
    expect(restored.code, tail(restored)).toBe(0);
    expect((await computeService(w.admin, source)).status).toBe('enabled');
  });
});
