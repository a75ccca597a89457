// The calls drainer makes about a stalled live migration, against a real Nova: the migration
// detail (2.23+, its copy counters) and force-complete (2.22+), checked for status codes and field
// names. The CI stack's fake.FakeLiveMigrateDriver runs a live migration for about 6 s and can be
// forced; where the driver finishes first (fake.FakeDriver), only Nova's answers for a migration that
// is not running are checked: 409 to a force-complete (the instance is no longer migrating: Nova
// checks it before the migration) and 404 to the detail, which drainer reads as "ended" (watch.ts).
import { describe, expect, it } from 'vitest';
import { getServer, serverAction, waitServer } from './support/nova.ts';
import { waitFor } from './support/wait.ts';
import { useWorld } from './support/world.ts';

const world = useWorld();

/** Field names of GET /servers/{id}/migrations/{mid} that drainer reads (Nova's API reference, 2.23). */
const COUNTERS = [
  'memory_total_bytes',
  'memory_processed_bytes',
  'memory_remaining_bytes',
  'disk_total_bytes',
  'disk_processed_bytes',
  'disk_remaining_bytes',
] as const;

describe('stalled-migration calls on a real Nova', () => {
  it('reads a running live migration with its counters, forces it to complete, and refuses both once it ended', async () => {
    const w = world();
    const [server] = await w.boot([{ label: 'force' }]);
    const id = server!.id;
    const nova = (mv: string, method: 'GET' | 'POST', path: string, json?: unknown) =>
      w.admin.request('compute', method, path, { microversion: mv, ...(json === undefined ? {} : { json }) });

    await serverAction(w.admin, id, { 'os-migrateLive': { host: null, block_migration: 'auto' } });
    // running (FakeLiveMigrateDriver) or already over (FakeDriver): the newest record of this server
    const found = await waitFor(
      async () => {
        const list = await nova('2.23', 'GET', `/servers/${id}/migrations`);
        expect(list.status).toBe(200);
        const running = (list.body.migrations as { id: number; status: string }[]).find(
          (m) => m.status === 'running',
        );
        if (running) return { id: running.id, running: true };
        const s = await getServer(w.admin, id);
        if (s?.taskState !== null) return undefined;
        const all = await nova('2.59', 'GET', `/os-migrations?instance_uuid=${id}`);
        const last = (all.body.migrations as { id: number }[])[0];
        return last ? { id: last.id, running: false } : undefined;
      },
      { what: `the live migration of ${id} running or over`, intervalMs: 250 },
    );
    const detailPath = `/servers/${id}/migrations/${found.id}`;
    const forcePath = `${detailPath}/action`;

    if (found.running) {
      const detail = await nova('2.23', 'GET', detailPath);
      if (detail.status === 200) {
        const m = detail.body.migration as Record<string, unknown>;
        expect(m).toMatchObject({ id: found.id, server_uuid: id });
        for (const k of COUNTERS) {
          expect(Object.keys(m), k).toContain(k);
          expect(['number', 'object'], `${k} is a number or null`).toContain(typeof m[k]);
          if (typeof m[k] === 'object') expect(m[k], k).toBeNull();
        }
      } else {
        expect(detail.status, 'ended between the two reads').toBe(404);
      }
      const forced = await nova('2.22', 'POST', forcePath, { force_complete: null });
      // 202 while it runs; 409 (instance no longer migrating) or 400 (migration no longer running)
      // when it ended in between: what drainer meets for a late force
      expect([202, 400, 409]).toContain(forced.status);
      const moved = await waitServer(w.admin, id, 'ACTIVE');
      expect(moved.host).toBe(w.settings.targetHost);
    }

    // over: Nova refuses to force it (409: the instance is not migrating) and no longer shows its detail (404)
    await waitFor(
      async () => {
        const all = await nova('2.59', 'GET', `/os-migrations?instance_uuid=${id}`);
        const last = (all.body.migrations as { id: number; status: string }[]).find((m) => m.id === found.id);
        return last && ['completed', 'done', 'error', 'failed', 'cancelled'].includes(last.status)
          ? true
          : undefined;
      },
      { what: `migration ${found.id} to end` },
    );
    const late = await nova('2.22', 'POST', forcePath, { force_complete: null });
    expect(late.status).toBe(409);
    expect(JSON.stringify(late.body)).toMatch(/conflictingRequest/);
    const gone = await nova('2.23', 'GET', detailPath);
    expect(gone.status).toBe(404);
  });
});
