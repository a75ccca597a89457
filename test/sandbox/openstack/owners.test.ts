// What a server's owner does, as real Nova does it: each action takes its time (task_state set by
// the API before its 202, ended by the compute manager later), and a second action meanwhile is
// refused 409 by nova/compute/api.py's state checks.
import { afterEach, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import type { OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { sandboxNova } from '../../../src/sandbox/world.ts';
import { liveMigrate, nova, start, token, until } from './client.ts';

let os: OpenStackSandbox;
afterEach(async () => {
  await os.close();
});

const server = (id: string, extra: object = {}) => ({
  id,
  name: id,
  projectId: 'admin',
  host: 'compute-a',
  ...extra,
});

/** Every status and task_state the server goes through, in order. */
function journal(id: string): string[] {
  const seen: string[] = [];
  os.state.subscribe((e) => {
    if (e.kind !== 'server' || e.server.id !== id) return;
    const line = `${e.server.status}/${e.server.taskState ?? '-'}`;
    if (seen.at(-1) !== line) seen.push(line);
  });
  return seen;
}

const act = (t: string, id: string, body: unknown) =>
  nova(os, 'POST', `/servers/${id}/action`, { token: t, version: '2.93', body });
const show = async (t: string, id: string) =>
  (await nova(os, 'GET', `/servers/${id}`, { token: t, version: '2.93' })).body?.server as
    Record<string, unknown> | undefined;

describe('sandbox Nova: the owner stops and starts a server', () => {
  it('os-stop powers off for the guest’s shutdown time (powering-off), and refuses a second stop meanwhile', async () => {
    // 60 s of shutdown (Nova's shutdown_timeout) on a clock 100× faster: 0.6 s real
    os = await start({ servers: [server('vm')] });
    const seen = journal('vm');
    const t = await token(os);

    const stop = await act(t, 'vm', { 'os-stop': null });
    const during = await show(t, 'vm');
    const again = await act(t, 'vm', { 'os-stop': null });
    const startEarly = await act(t, 'vm', { 'os-start': null });
    const migrate = await act(t, 'vm', liveMigrate());
    await until(() => (os.state.server('vm')?.status === 'SHUTOFF' ? true : undefined), 'SHUTOFF');

    expect(stop.status).toBe(202);
    expect([during?.status, during?.['OS-EXT-STS:task_state']]).toEqual(['ACTIVE', 'powering-off']);
    expect([again.status, again.body.conflictingRequest.message]).toEqual([
      409,
      "Cannot 'stop' instance vm while it is in task_state powering-off",
    ]);
    expect(startEarly.status).toBe(409);
    expect(migrate.status).toBe(409);
    expect(seen).toEqual(['ACTIVE/powering-off', 'SHUTOFF/-']);
  });

  it('os-start goes through powering-on; a guest with its own shutdown time stops in that time', async () => {
    os = await start({
      servers: [server('quick', { shutdownMs: 2000 }), server('slow')],
      timings: { shutdownMs: 600_000 },
    });
    const seen = journal('quick');
    const t = await token(os);

    await act(t, 'quick', { 'os-stop': null });
    await act(t, 'slow', { 'os-stop': null });
    await until(() => (os.state.server('quick')?.status === 'SHUTOFF' ? true : undefined), 'quick off');
    const slowMeanwhile = os.state.server('slow');
    const started = await act(t, 'quick', { 'os-start': null });
    await until(() => (os.state.server('quick')?.taskState === null ? true : undefined), 'quick on');

    expect(slowMeanwhile?.taskState).toBe('powering-off');
    expect(started.status).toBe(202);
    expect(seen).toEqual(['ACTIVE/powering-off', 'SHUTOFF/-', 'SHUTOFF/powering-on', 'ACTIVE/-']);
  });

  it('a locked server refuses its owner (409) but not an admin', async () => {
    os = await start({
      servers: [{ id: 'locked', name: 'locked', projectId: 'demo', host: 'compute-a', locked: true }],
    });
    const owner = await token(os, 'demo');
    const admin = await token(os);

    const byOwner = await act(owner, 'locked', { 'os-stop': null });
    const byAdmin = await act(admin, 'locked', { 'os-stop': null });

    expect([byOwner.status, byOwner.body.conflictingRequest.message]).toEqual([
      409,
      'Instance locked is locked',
    ]);
    expect(byAdmin.status).toBe(202);
  });
});

describe('sandbox Nova: the owner shelves, unshelves and deletes', () => {
  it('shelve offloads at once (shelved_offload_time 0): the host is null and the host listing no longer has it', async () => {
    os = await start({ servers: [server('vm')], timings: { shutdownMs: 1000 } });
    const seen = journal('vm');
    const t = await token(os);

    const res = await act(t, 'vm', { shelve: null });
    await until(
      () => (os.state.server('vm')?.status === 'SHELVED_OFFLOADED' ? true : undefined),
      'offloaded',
    );
    const shown = await show(t, 'vm');
    const listed = await nova(os, 'GET', '/servers/detail?all_tenants=1&host=compute-a', {
      token: t,
      version: '2.93',
    });
    const stop = await act(t, 'vm', { 'os-stop': null });

    expect(res.status).toBe(202);
    // no migration says it left compute-a: the offload's own record does (the soak's judge)
    const off = sandboxNova(os.state).servers.find((s) => s.id === 'vm')?.offloaded;
    expect(off).toEqual({ from: 'compute-a', at: expect.any(Number) as number });
    expect(seen).toEqual([
      'ACTIVE/shelving',
      'ACTIVE/shelving_image_pending_upload',
      'ACTIVE/shelving_image_uploading',
      'SHELVED/shelving_offloading',
      'SHELVED_OFFLOADED/-',
    ]);
    expect([shown?.['OS-EXT-SRV-ATTR:host'], shown?.['OS-EXT-SRV-ATTR:hypervisor_hostname']]).toEqual([
      null,
      null,
    ]);
    expect(listed.body.servers).toEqual([]);
    expect([stop.status, stop.body.conflictingRequest.message]).toEqual([409, 'Instance vm is not ready']);
  });

  it('unshelve of an offloaded server goes through the scheduler: never onto a disabled host', async () => {
    const clock = new ScaledClock(100);
    os = await start({
      clock,
      hosts: [{ name: 'compute-a', disabled: { reason: 'maintenance' } }, { name: 'compute-b' }],
      servers: [server('vm', { status: 'SHELVED_OFFLOADED' })],
    });
    const t = await token(os);
    const asked = clock.now();

    const res = await act(t, 'vm', { unshelve: null });
    await until(() => (os.state.server('vm')?.status === 'ACTIVE' ? true : undefined), 'ACTIVE');

    expect(res.status).toBe(202);
    expect(os.state.server('vm')?.host).toBe('compute-b');
    // no migration says when it came onto compute-b: the placement's own time does (the soak's judge)
    const placed = os.state.server('vm')?.placedAt ?? 0;
    expect(placed).toBeGreaterThan(asked);
    expect(placed).toBeLessThanOrEqual(clock.now());
    // and the soak's World carries it
    expect(sandboxNova(os.state).servers.find((s) => s.id === 'vm')?.placedAt).toBe(placed);
  });

  it('shelved_offload_time -1 keeps a shelved server on its host (SHELVED)', async () => {
    os = await start({ servers: [server('vm')], timings: { shutdownMs: 1000, shelvedOffloadMs: -1 } });
    const t = await token(os);

    await act(t, 'vm', { shelve: null });
    await until(() => (os.state.server('vm')?.status === 'SHELVED' ? true : undefined), 'SHELVED');
    await new Promise((r) => setTimeout(r, 100));

    expect([os.state.server('vm')?.status, os.state.server('vm')?.host]).toEqual(['SHELVED', 'compute-a']);
  });

  it('delete, even mid-migration: 204, then gone from listings and 404, DELETED to changes-since; its migration ends', async () => {
    os = await start({ servers: [server('vm', { migrationMs: 600_000 })] });
    const t = await token(os);
    const since = new Date(os.state.server('vm')!.createdAt).toISOString();
    await act(t, 'vm', liveMigrate());
    await until(
      () => (os.state.migrations('vm')[0]?.status === 'running' ? true : undefined),
      'migration running',
    );

    const res = await nova(os, 'DELETE', '/servers/vm', { token: t, version: '2.93' });
    await until(() => (os.state.server('vm')?.status === 'DELETED' ? true : undefined), 'DELETED');
    const got = await nova(os, 'GET', '/servers/vm', { token: t, version: '2.93' });
    const onHost = await nova(os, 'GET', '/servers/detail?all_tenants=1&host=compute-a', {
      token: t,
      version: '2.93',
    });
    const changed = await nova(
      os,
      'GET',
      `/servers/detail?all_tenants=1&changes-since=${encodeURIComponent(since)}`,
      { token: t, version: '2.93' },
    );

    expect(res.status).toBe(204);
    expect(got.status).toBe(404);
    expect(onHost.body.servers).toEqual([]);
    expect(changed.body.servers.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      ['vm', 'DELETED'],
    ]);
    expect(os.state.migrations('vm').map((m) => m.status)).toEqual(['error']);
  });

  it('resize goes to another host (RESIZE → VERIFY_RESIZE with the new flavor); one no host has room for ends back on its host', async () => {
    os = await start({
      servers: [
        server('grow', { ramMb: 2048, vcpus: 1, diskGb: 10 }),
        server('huge', { ramMb: 2048, vcpus: 1, diskGb: 10 }),
      ],
    });
    const t = await token(os);

    const same = await act(t, 'grow', { resize: { flavorRef: 'flavor-c1-r2048-d10' } });
    const res = await act(t, 'grow', { resize: { flavorRef: 'flavor-c2-r4096-d10' } });
    const tooBig = await act(t, 'huge', { resize: { flavorRef: 'flavor-c2-r999999-d10' } });
    await until(() => (os.state.server('grow')?.status === 'VERIFY_RESIZE' ? true : undefined), 'resized');
    await until(() => (os.state.migrations('huge')[0]?.status === 'error' ? true : undefined), 'no host');

    expect([same.status, same.body.badRequest.message]).toEqual([
      400,
      'When resizing, instances must change flavor!',
    ]);
    expect([res.status, tooBig.status]).toEqual([202, 202]);
    expect(os.state.server('grow')).toMatchObject({ host: 'compute-b', ramMb: 4096 });
    expect(os.state.migrations('grow').map((m) => [m.type, m.status])).toEqual([['resize', 'finished']]);
    expect(os.state.server('huge')).toMatchObject({ host: 'compute-a', status: 'ACTIVE', taskState: null });
  });
});

describe('sandbox Nova: every action is in the server’s action log (os-instance-actions)', () => {
  const actions = async (t: string, id: string, version = '2.93') =>
    nova(os, 'GET', `/servers/${id}/os-instance-actions`, { token: t, version });
  const settled = (id: string, status: string) =>
    until(() => {
      const s = os.state.server(id);
      return s?.status === status && !s.taskState ? true : undefined;
    }, `${id} ${status}`);

  it('a stopped server resized and confirmed stays SHUTOFF on its new host, and the log names each request newest first', async () => {
    // nova/compute/manager.py finish_resize: power_on = old_vm_state != STOPPED
    os = await start({ servers: [server('vm', { ramMb: 2048, vcpus: 1, diskGb: 10 })] });
    const t = await token(os);

    const stop = await act(t, 'vm', { 'os-stop': null });
    await settled('vm', 'SHUTOFF');
    const resize = await act(t, 'vm', { resize: { flavorRef: 'flavor-c2-r4096-d10' } });
    await settled('vm', 'VERIFY_RESIZE');
    const confirm = await act(t, 'vm', { confirmResize: null });
    await settled('vm', 'SHUTOFF');
    const refused = await act(t, 'vm', { 'os-stop': null });
    const log = await actions(t, 'vm');

    expect(os.state.server('vm')).toMatchObject({ host: 'compute-b', status: 'SHUTOFF' });
    expect(refused.status).toBe(409);
    const rows = (log.body.instanceActions as Record<string, unknown>[]).map((a) => [a.action, a.request_id]);
    expect(rows).toEqual([
      ['confirmResize', confirm.headers.get('x-openstack-request-id')],
      ['resize', resize.headers.get('x-openstack-request-id')],
      ['stop', stop.headers.get('x-openstack-request-id')],
      ['create', expect.stringMatching(/^req-/)],
    ]);
    expect(log.body.instanceActions[0]).toMatchObject({
      instance_uuid: 'vm',
      message: null,
      user_id: expect.any(String),
      project_id: expect.any(String),
      start_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/),
    });
  });

  it('a deleted server’s log is listed from 2.21 (404 before), its delete first', async () => {
    os = await start({ servers: [server('gone')] });
    const t = await token(os);

    await nova(os, 'DELETE', '/servers/gone', { token: t, version: '2.93' });
    await until(() => (os.state.server('gone')?.status === 'DELETED' ? true : undefined), 'deleted');
    const before = await actions(t, 'gone', '2.20');
    const after = await actions(t, 'gone', '2.21');

    expect(before.status).toBe(404);
    expect(after.body.instanceActions.map((a: { action: string }) => a.action)).toEqual(['delete', 'create']);
  });
});
