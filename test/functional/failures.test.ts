// How drainer fails on a real Nova: asynchronous migration errors (2.34+) are retried as configured
// and reported; a migration past its deadline is aborted and the server stays where it was.
import { describe, expect, it } from 'vitest';
import { tail } from './support/cli.ts';
import { useCli } from './support/cli-world.ts';
import { cloudGuests } from './support/guest.ts';
import { findImageId, getServer, migrationsOf, setService, waitServer } from './support/nova.ts';
import { waitFor } from './support/wait.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();
const cli = useCli(world);
const { real } = await cloudGuests();

describe('migration failures on a real Nova', () => {
  it('retries migrations that fail with no destination, then exits 1 naming each server that stayed', async () => {
    const w = world();
    const source = w.settings.sourceHost;
    const servers = await w.boot([{ label: 'fail-1' }, { label: 'fail-2' }]);
    await setService(w.admin, w.settings.targetHost, false, 'ft: no destination');
    const retries = 1;

    // without the capacity pre-flight, which would refuse before the first migration (capacity.test.ts)
    const run = await cli().drainer(['run-once', '--node', source], {
      nova: { retries, retryBackoff: 1 },
      evacuation: { capacityCheck: 'off' },
    });

    expect(run.code, tail(run)).toBe(1);
    for (const s of servers) {
      expect(run.output.includes(s.name) || run.output.includes(s.id), `output names ${s.name}`).toBe(true);
      const now = await getServer(w.admin, s.id);
      expect([now?.host, now?.status, now?.taskState]).toEqual([source, 'ACTIVE', null]);
      const attempts = (await migrationsOf(w.admin, s.id)).filter(
        (m) => m.migrationType === 'live-migration',
      );
      expect(attempts.map((m) => m.status)).toEqual(Array(retries + 1).fill('error'));
    }
  });

  it('aborts a live migration past nova.migrationTimeout and leaves the server ACTIVE on the source', async () => {
    // Needs a live migration that outlasts the timeout and can be aborted: the CI stack's default
    // fake.FakeLiveMigrateDriver takes about 6 s (fake.FakeDriver ~1 s); an idle real guest moves in
    // ~3 s, one that keeps writing its memory (drainer-guest-hot) does not converge
    const w = world();
    const source = w.settings.sourceHost;
    const image = real ? { image: await findImageId(w.admin, 'drainer-guest-hot') } : {};
    const [server] = await w.boot([{ label: 'abort', ...image }]);

    const run = await cli().drainer(['run-once', '--node', source], {
      nova: { migrationTimeout: '3s', abortOnTimeout: true, retries: 0 },
    });

    expect(run.code, tail(run)).toBe(1);
    expect(run.output.includes(server!.name) || run.output.includes(server!.id)).toBe(true);
    // Nova rolls an aborted migration back asynchronously: wait for the server to settle
    const settled = await waitServer(w.admin, server!.id, 'ACTIVE');
    expect(settled.host).toBe(source);
    const record = await waitFor(
      async () => {
        const m = (await migrationsOf(w.admin, server!.id))[0];
        return m && !['accepted', 'queued', 'preparing', 'running'].includes(m.status) ? m : undefined;
      },
      { what: 'the aborted migration record to settle' },
    );
    expect(record.status).toBe('cancelled');
  });
});
