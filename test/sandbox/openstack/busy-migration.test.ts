// The sandbox Nova with busy guests: the migration detail shows libvirt's counters with Nova's
// field names, a guest dirtying faster than the link never converges, and the host's completion
// timeout ends it as live_migration_timeout_action says.
import { afterEach, describe, expect, it } from 'vitest';
import type { HostSpec, OpenStackSandbox } from '../../../src/sandbox/openstack/index.ts';
import { liveMigrate, nova, start, token, until } from './client.ts';

let os: OpenStackSandbox;
const MB = 1024 * 1024;
afterEach(async () => {
  await os.close();
});

/** 8 GiB copied at 1 GiB/s while the guest dirties 2 GB/s: it never converges. */
const busy = { id: 's1', name: 'db', projectId: 'admin', host: 'compute-a', ramMb: 8192, migrationMs: 8000 };
const TOTAL = 8192 * MB;
const migrationOf = (status: string) => os.state.migrations('s1').find((m) => m.status === status);

async function startBusy(source: Partial<HostSpec> = {}, dirtyMbPerSecond = 2000) {
  os = await start({
    hosts: [{ name: 'compute-a', ...source }, { name: 'compute-b' }],
    servers: [{ ...busy, dirtyMbPerSecond }],
  });
  const t = await token(os);
  await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
  const running = await until(() => migrationOf('running'), 'running');
  return { t, running };
}

describe('sandbox Nova: busy live migrations', () => {
  it('shows the copy counters as integers under Nova field names, and what is left stops falling', async () => {
    const { t, running } = await startBusy();
    const read = async () =>
      (await nova(os, 'GET', `/servers/s1/migrations/${running.id}`, { token: t, version: '2.23' })).body
        .migration;
    await until(
      async () => ((await read()).memory_processed_bytes > 2 * TOTAL ? true : undefined),
      '2 passes',
    );
    const first = await read();
    await until(
      async () => ((await read()).memory_processed_bytes > 6 * TOTAL ? true : undefined),
      '6 passes',
    );
    const later = await read();

    expect(first).toMatchObject({
      id: running.id,
      status: 'running',
      server_uuid: 's1',
      memory_total_bytes: TOTAL,
      disk_total_bytes: 0,
      disk_processed_bytes: 0,
      disk_remaining_bytes: 0,
    });
    for (const k of ['memory_total_bytes', 'memory_processed_bytes', 'memory_remaining_bytes'])
      expect(Number.isInteger(first[k]), k).toBe(true);
    expect(later.memory_remaining_bytes).toBe(first.memory_remaining_bytes);
    expect(later.memory_remaining_bytes).toBeGreaterThan(0);
    expect(os.state.server('s1')?.host).toBe('compute-a');
  });

  it('a quiet guest converges in its migration time', async () => {
    await startBusy({}, 0);
    await until(() => migrationOf('completed'), 'completed');
    expect(os.state.server('s1')?.host).toBe('compute-b');
  });

  it('force_complete finishes a busy migration after a short pause', async () => {
    const { t, running } = await startBusy();
    const forced = await nova(os, 'POST', `/servers/s1/migrations/${running.id}/action`, {
      token: t,
      version: '2.22',
      body: { force_complete: null },
    });
    await until(() => migrationOf('completed'), 'completed');
    expect(forced.status).toBe(202);
    expect(os.state.server('s1')).toMatchObject({ host: 'compute-b', taskState: null });
  });

  it('the completion timeout aborts it by default: cancelled, the server stays on its source', async () => {
    await startBusy({ completionTimeoutSecondsPerGiB: 5 });
    await until(() => migrationOf('cancelled'), 'cancelled');
    expect(os.state.server('s1')).toMatchObject({ host: 'compute-a', status: 'ACTIVE', taskState: null });
  });

  it('with timeout action force_complete the completion timeout moves it', async () => {
    await startBusy({ completionTimeoutSecondsPerGiB: 5, timeoutAction: 'force_complete' });
    await until(() => migrationOf('completed'), 'completed');
    expect(os.state.server('s1')?.host).toBe('compute-b');
  });

  it('the completed-without-move fault: record completed, server still MIGRATING on its source', async () => {
    os = await start({
      servers: [{ ...busy, dirtyMbPerSecond: 0 }],
      faults: { completeWithoutMove: () => true },
    });
    const t = await token(os);
    await nova(os, 'POST', '/servers/s1/action', { token: t, version: '2.93', body: liveMigrate() });
    await until(() => migrationOf('completed'), 'completed');
    expect(os.state.server('s1')).toMatchObject({ host: 'compute-a', status: 'MIGRATING' });
  });
});
