// Submit-ahead against the real Nova (max_concurrent_live_migrations at its default, 1): drainer with
// maxConcurrentMigrations 1 and submitAhead 1 never has more than two migrations from the host
// unfinished in Nova's own records, and moves each server exactly once.
import { describe, expect, it } from 'vitest';
import { getServer, migrationsOf } from './support/nova.ts';
import { evacuate, novaPlugin, restore } from './support/nova-plugin.ts';
import { expectStatus, type Body } from './support/session.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();
const FINISHED = new Set(['completed', 'error', 'failed', 'cancelled', 'done', 'confirmed', 'reverted']);

describe('submit-ahead against a real Nova', () => {
  it('keeps at most M + 1 migrations unfinished and migrates each server once', async () => {
    const w = world();
    const { sourceHost: source, targetHost: target } = w.settings;
    const servers = await w.boot([
      { label: 'sa-1' },
      { label: 'sa-2' },
      { label: 'sa-3' },
      { label: 'sa-4' },
    ]);
    const ours = new Set(servers.map((s) => s.id));
    const plugin = await novaPlugin(w.cloud, { maxConcurrentMigrations: 1, submitAhead: 1 });

    // Nova's records of the host, read every 100 ms while the evacuation runs
    let most = 0;
    let polls = 0;
    let running = true;
    const watch = (async () => {
      while (running) {
        const res = await w.admin.request('compute', 'GET', '/os-migrations', {
          microversion: '2.59',
          searchParams: { source_compute: source, migration_type: 'live-migration' },
        });
        const rows = expectStatus(res, 'host migrations', 200).body.migrations as Body[];
        const open = rows.filter((m) => ours.has(m.instance_uuid) && !FINISHED.has(m.status)).length;
        most = Math.max(most, open);
        polls++;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const { outcome, record } = await evacuate(plugin, source).finally(() => {
      running = false;
    });
    await watch;

    expect(outcome.succeeded, JSON.stringify(outcome)).toBe(true);
    expect(polls).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
    for (const s of servers) {
      expect((await getServer(w.admin, s.id))?.host).toBe(target);
      const lives = (await migrationsOf(w.admin, s.id)).filter((m) => m.migrationType === 'live-migration');
      expect(lives.map((m) => m.status)).toEqual(['completed']);
    }

    await restore(plugin, source, record);
  });
});
