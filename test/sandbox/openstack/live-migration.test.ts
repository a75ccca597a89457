import { afterEach, describe, expect, it } from 'vitest';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { liveMigrate, nova, start, token, until } from './client.ts';

let os: OpenStackSandbox;
afterEach(async () => {
  await os.close();
});

const migrationOf = (serverId: string, status: string) =>
  os.state.migrations(serverId).find((m) => m.status === status);

describe('sandbox Nova live migration', () => {
  it('moves an ACTIVE server to another enabled host in one step and records the migration', async () => {
    os = await start({ servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }] });
    const t = await token(os);
    const seen: string[] = [];
    os.state.subscribe((e) => {
      const now = e.kind === 'server' ? `${e.server.status}@${e.server.host}` : undefined;
      if (now && seen.at(-1) !== now) seen.push(now);
    });

    const res = await nova(os, 'POST', '/servers/s1/action', {
      token: t,
      version: '2.93',
      body: liveMigrate(),
    });
    await until(() => migrationOf('s1', 'completed'), 'completed migration');

    expect(res.status).toBe(202);
    expect(seen).toEqual(['MIGRATING@compute-a', 'ACTIVE@compute-b']);
    expect(os.state.server('s1')).toMatchObject({ host: 'compute-b', status: 'ACTIVE', taskState: null });
    expect(os.state.migrateCalls('s1')).toBe(1);
  });

  it('shows MIGRATING with the task state and the source host while the migration runs', async () => {
    os = await start({
      servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }],
      faults: { hangMigrations: () => true },
    });
    const t = await token(os);

    await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
    const during = await nova(os, 'GET', '/servers/s1', { token: t, version: '2.93' });

    expect(during.body.server).toMatchObject({
      status: 'MIGRATING',
      'OS-EXT-STS:task_state': 'migrating',
      'OS-EXT-STS:vm_state': 'active',
      'OS-EXT-SRV-ATTR:host': 'compute-a',
    });
  });

  it('fails asynchronously without an enabled destination: migration error, server ACTIVE on its source', async () => {
    os = await start({
      hosts: [{ name: 'compute-a' }, { name: 'compute-b', disabled: { reason: 'maintenance' } }],
      servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }],
    });
    const t = await token(os);

    const res = await nova(os, 'POST', '/servers/s1/action', {
      token: t,
      version: '2.93',
      body: liveMigrate(),
    });
    const failed = await until(() => migrationOf('s1', 'error'), 'migration error');
    const list = await nova(os, 'GET', '/os-migrations?instance_uuid=s1', { token: t, version: '2.93' });

    expect(res.status).toBe(202);
    expect(failed.destHost).toBeNull();
    expect(os.state.server('s1')).toMatchObject({ host: 'compute-a', status: 'ACTIVE', taskState: null });
    expect(list.body.migrations[0]).toMatchObject({ status: 'error', migration_type: 'live-migration' });
  });

  it('fails synchronously with 400 before 2.34 when the scheduler finds no host', async () => {
    os = await start({
      hosts: [{ name: 'compute-a' }],
      servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }],
    });
    const t = await token(os);

    const res = await nova(os, 'POST', '/servers/s1/action', {
      token: t,
      version: '2.30',
      body: liveMigrate(),
    });

    expect(res.status).toBe(400);
    expect(res.body.badRequest.message).toBe(
      'No valid host was found. There are not enough hosts available.',
    );
    expect(os.state.server('s1')?.taskState).toBeNull();
  });

  it('queues a second migration from the same host while max_concurrent_live_migrations are running', async () => {
    os = await start({
      servers: [
        { id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' },
        { id: 's2', name: 's2', projectId: 'admin', host: 'compute-a' },
      ],
      faults: { hangMigrations: (id) => id === 's1' },
    });
    const t = await token(os);

    await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
    await until(() => migrationOf('s1', 'running'), 's1 running');
    await nova(os, 'POST', '/servers/s2/action', { token: t, version: '2.93', body: liveMigrate() });
    const queued = await until(() => migrationOf('s2', 'queued'), 's2 queued');
    const listed = await nova(os, 'GET', '/servers/s2/migrations', { token: t, version: '2.93' });
    // Abort the hanging one: its slot goes to s2, which then completes.
    const first = migrationOf('s1', 'running');
    const abort = await nova(os, 'DELETE', `/servers/s1/migrations/${first?.id}`, {
      token: t,
      version: '2.24',
    });
    await until(() => migrationOf('s2', 'completed'), 's2 completed');

    expect(queued.destHost).toBe('compute-b');
    expect(listed.body.migrations).toEqual([expect.objectContaining({ id: queued.id, status: 'queued' })]);
    expect(abort.status).toBe(202);
    expect(migrationOf('s1', 'cancelled')).toBeDefined();
    expect(os.state.server('s1')).toMatchObject({ host: 'compute-a', status: 'ACTIVE' });
    expect(os.state.server('s2')).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
  });

  it('runs as many migrations per source host as maxConcurrentLiveMigrations allows', async () => {
    os = await start({
      hosts: [{ name: 'compute-a', maxConcurrentLiveMigrations: 2 }, { name: 'compute-b' }],
      servers: ['s1', 's2', 's3'].map((id) => ({ id, name: id, projectId: 'admin', host: 'compute-a' })),
      faults: { hangMigrations: () => true },
    });
    const t = await token(os);

    for (const id of ['s1', 's2', 's3']) {
      await nova(os, 'POST', `/servers/${id}/action`, { token: t, version: '2.93', body: liveMigrate() });
    }
    await until(() => migrationOf('s3', 'queued') && migrationOf('s2', 'running'), 'two running, one queued');

    expect(migrationOf('s1', 'running')).toBeDefined();
  });

  it('keeps the record running and the slot held for seconds after the server shows its new host', async () => {
    os = await start({
      servers: [
        { id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' },
        { id: 's2', name: 's2', projectId: 'admin', host: 'compute-a' },
      ],
    });
    const t = await token(os);
    const landed: { s1: string | undefined; s2: string | undefined; at: number }[] = [];
    os.state.subscribe((e) => {
      if (e.kind === 'server' && e.server.id === 's1' && e.server.host === 'compute-b' && !landed.length) {
        const [s1, s2] = ['s1', 's2'].map((id) => os.state.migrations(id).at(-1)?.status);
        landed.push({ s1, s2, at: Date.now() });
      }
    });
    for (const id of ['s1', 's2'])
      await nova(os, 'POST', `/servers/${id}/action`, { token: t, version: '2.93', body: liveMigrate() });

    const done = await until(() => migrationOf('s1', 'completed'), 's1 completed');
    const s2Started = await until(() => migrationOf('s2', 'preparing') ?? migrationOf('s2', 'running'), 's2');

    // at the switch: s1's record runs on (post-migration) and s2 waits behind it (one slot)
    expect(landed[0]).toMatchObject({ s1: 'running', s2: 'queued' });
    // the default post-migration: 3 s on the sandbox's clock (100× real, so give or take 100 ms a tick)
    const post = done.updatedAt - (done.landedAt ?? Infinity);
    expect(post).toBeGreaterThanOrEqual(2900);
    expect(post).toBeLessThan(4000);
    expect(s2Started.updatedAt).toBeGreaterThanOrEqual(done.updatedAt);
  });

  // nova/compute/api.py live_migrate_abort: check_instance_state(task_state=[MIGRATING]) comes before
  // the migration's own status, and the destination cleared the task when the guest switched
  it('refuses an abort that comes after the guest switched hosts (409: the task is no longer migrating); the migration completes', async () => {
    os = await start({
      servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }],
      timings: { postMigrationMs: 3_000 }, // a window wide enough to abort in
    });
    const t = await token(os);
    await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
    // the server shows its new host while Nova's record still says running (post-migration)
    const running = await until(
      () => (os.state.server('s1')?.host === 'compute-b' ? migrationOf('s1', 'running') : undefined),
      'switched, record still running',
    );

    const abort = await nova(os, 'DELETE', `/servers/s1/migrations/${running.id}`, {
      token: t,
      version: '2.93',
    });
    await until(() => migrationOf('s1', 'completed'), 'completed migration');

    expect(abort.status).toBe(409);
    expect(abort.body.conflictingRequest.message).toBe(
      "Cannot 'abort live migration' instance s1 while it is in task_state None",
    );
    expect(migrationOf('s1', 'cancelled')).toBeUndefined();
    expect(os.state.server('s1')).toMatchObject({ host: 'compute-b', status: 'ACTIVE', taskState: null });
  });

  it('refuses to abort a migration still accepted (400): the conductor has not queued it yet', async () => {
    os = await start({
      servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }],
      timings: { scheduleMs: 3_600_000 },
    });
    const t = await token(os);
    await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
    const accepted = migrationOf('s1', 'accepted');

    const abort = await nova(os, 'DELETE', `/servers/s1/migrations/${accepted?.id}`, {
      token: t,
      version: '2.93',
    });

    expect(abort.status).toBe(400);
    expect(abort.body.badRequest.message).toBe(
      `Migration ${accepted?.id} state of instance s1 is accepted. Cannot abort live migration while the migration is in this state.`,
    );
    expect(os.state.server('s1')).toMatchObject({ status: 'MIGRATING', taskState: 'migrating' });
  });

  it('aborts a queued migration only from 2.65', async () => {
    os = await start({
      servers: [
        { id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' },
        { id: 's2', name: 's2', projectId: 'admin', host: 'compute-a' },
      ],
      faults: { hangMigrations: () => true },
    });
    const t = await token(os);
    await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
    await nova(os, 'POST', '/servers/s2/action', { token: t, version: '2.93', body: liveMigrate() });
    const queued = await until(() => migrationOf('s2', 'queued'), 's2 queued');

    const old = await nova(os, 'DELETE', `/servers/s2/migrations/${queued.id}`, {
      token: t,
      version: '2.64',
    });
    const tooOld = await nova(os, 'DELETE', `/servers/s2/migrations/${queued.id}`, {
      token: t,
      version: '2.23',
    });
    const ok = await nova(os, 'DELETE', `/servers/s2/migrations/${queued.id}`, { token: t, version: '2.65' });
    await until(() => migrationOf('s2', 'cancelled'), 's2 cancelled');

    expect(old.status).toBe(400);
    expect(old.body.badRequest.message).toBe(
      `Migration ${queued.id} state of instance s2 is queued. Cannot abort live migration while the migration is in this state.`,
    );
    expect(tooOld.status).toBe(404);
    expect(ok.status).toBe(202);
    expect(os.state.server('s2')).toMatchObject({ status: 'ACTIVE', taskState: null, host: 'compute-a' });
  });

  it('fails an injected migration: record error, server back to ACTIVE on its source', async () => {
    os = await start({
      servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }],
      faults: { failMigrations: (id) => id === 's1' },
    });
    const t = await token(os);

    await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
    await until(() => migrationOf('s1', 'error'), 'migration error');

    expect(migrationOf('s1', 'error')?.destHost).toBe('compute-b');
    expect(os.state.server('s1')).toMatchObject({ host: 'compute-a', status: 'ACTIVE', taskState: null });
  });

  it('answers 409 for a migrating or SHUTOFF server and 400 for an unknown host, as Nova words it', async () => {
    os = await start({
      servers: [
        { id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' },
        { id: 'off', name: 'off', projectId: 'admin', host: 'compute-a', status: 'SHUTOFF' },
      ],
      faults: { hangMigrations: () => true },
    });
    const t = await token(os);
    const call = (id: string, host: string | null = null) =>
      nova(os, 'POST', `/servers/${id}/action`, { token: t, version: '2.93', body: liveMigrate(host) });

    const unknown = await call('s1', 'nohost');
    await call('s1');
    const again = await call('s1');
    const off = await call('off');

    expect(unknown.status).toBe(400);
    expect(unknown.body.badRequest.message).toBe('Compute host nohost could not be found.');
    expect(again.status).toBe(409);
    expect(again.body.conflictingRequest.message).toBe(
      "Cannot 'os-migrateLive' instance s1 while it is in task_state migrating",
    );
    expect(off.status).toBe(409);
    expect(off.body.conflictingRequest.message).toBe(
      "Cannot 'os-migrateLive' instance off while it is in vm_state stopped",
    );
    expect(os.state.migrateCalls('s1')).toBe(3);
  });

  it('validates the body per microversion: disk_over_commit before 2.25, "auto" from 2.25', async () => {
    os = await start({ servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }] });
    const t = await token(os);
    const call = (version: string, body: unknown) =>
      nova(os, 'POST', '/servers/s1/action', { token: t, version, body: { 'os-migrateLive': body } });

    const missing = await call('2.1', { host: null, block_migration: false });
    const auto = await call('2.24', { host: null, block_migration: 'auto', disk_over_commit: false });
    const extra = await call('2.25', { host: null, block_migration: 'auto', disk_over_commit: false });

    expect(missing.status).toBe(400);
    expect(missing.body.badRequest.message).toBe(
      "Invalid input for field/attribute os-migrateLive. Value: {'host': None, 'block_migration': False}. 'disk_over_commit' is a required property",
    );
    expect(auto.status).toBe(400);
    expect(auto.body.badRequest.message).toMatch(
      /^Invalid input for field\/attribute block_migration\. Value: auto\./,
    );
    expect(extra.body.badRequest.message).toContain(
      "Additional properties are not allowed ('disk_over_commit' was unexpected)",
    );
  });

  it('lists only in-progress live migrations per server and all migrations in os-migrations', async () => {
    os = await start({
      servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }],
      // a long "accepted" phase (0.5 s real) so the first list surely sees it
      timings: { scheduleMs: 50_000 },
    });
    const t = await token(os);

    await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
    const accepted = await nova(os, 'GET', '/servers/s1/migrations', { token: t, version: '2.93' });
    const m = await until(() => migrationOf('s1', 'completed'), 'completed');
    const after = await nova(os, 'GET', '/servers/s1/migrations', { token: t, version: '2.93' });
    const show = await nova(os, 'GET', `/servers/s1/migrations/${m.id}`, { token: t, version: '2.93' });
    const byHost = await nova(os, 'GET', '/os-migrations?host=compute-b&migration_type=live-migration', {
      token: t,
      version: '2.80',
    });

    expect(accepted.body.migrations).toEqual([]);
    expect(after.body.migrations).toEqual([]);
    expect(show.status).toBe(404);
    expect(show.body.itemNotFound.message).toBe(`Live migration ${m.id} for server s1 is not in progress.`);
    expect(byHost.body.migrations).toEqual([
      expect.objectContaining({
        id: m.id,
        uuid: m.uuid,
        instance_uuid: 's1',
        source_compute: 'compute-a',
        dest_compute: 'compute-b',
        status: 'completed',
        migration_type: 'live-migration',
        project_id: os.credentials.admin.projectId,
      }),
    ]);
  });

  it('completes a hanging running migration on force_complete and refuses it when not running', async () => {
    os = await start({
      servers: [{ id: 's1', name: 's1', projectId: 'admin', host: 'compute-a' }],
      faults: { hangMigrations: () => true },
    });
    const t = await token(os);
    await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
    const running = await until(() => migrationOf('s1', 'running'), 'running');

    const forced = await nova(os, 'POST', `/servers/s1/migrations/${running.id}/action`, {
      token: t,
      version: '2.22',
      body: { force_complete: null },
    });
    await until(() => migrationOf('s1', 'completed'), 'completed');
    const again = await nova(os, 'POST', `/servers/s1/migrations/${running.id}/action`, {
      token: t,
      version: '2.22',
      body: { force_complete: null },
    });

    expect(forced.status).toBe(202);
    expect(os.state.server('s1')?.host).toBe('compute-b');
    // the instance is no longer migrating: 409, as the real Nova answers (test/functional/force-complete)
    expect(again.status).toBe(409);
  });

  it('forbids live migration to a non-admin owner', async () => {
    os = await start({ servers: [{ id: 'd1', name: 'd1', projectId: 'demo', host: 'compute-a' }] });
    const demo = await token(os, 'demo');

    const res = await nova(os, 'POST', '/servers/d1/action', {
      token: demo,
      version: '2.93',
      body: liveMigrate(),
    });

    expect(res.status).toBe(403);
    expect(res.body.forbidden.message).toBe(
      "Policy doesn't allow os_compute_api:os-migrate-server:migrate_live to be performed.",
    );
  });
});
