// Story (issue 49): logind's time is up while a server's live migration is still `accepted`: Nova has the
// request, its conductor has not yet handed it to the source host. It cannot be aborted then (Nova aborts
// `queued` from 2.65, and `running`) nor stopped (os-stop answers 409 while the task is `migrating`), and
// queued behind a running move it may never start before the host goes down. So the fallback waits a
// little, within its margin, for the migration to leave `accepted`: queued, it is taken out of the queue
// and the server stopped (marked); running, it is left to finish; still accepted at the bound, the server
// is named as left, with why; so is a server whose queued move Nova is slow to take out of the queue.
// Against the sandbox Nova on a clock 20× faster, whose scheduler holds a migration `accepted` for
// scheduleMs (30 s: 1.5 s real, for drainer's first read to find it there).
import { describe, expect, it } from 'vitest';
import { stopMarkOf } from '../../../src/plugins/nova/stop-mark.ts';
import type { ComputeTimings, HostSpec, ServerSpec } from '../../../src/sandbox/openstack/index.ts';
import { until } from '../../sandbox/openstack/client.ts';
import { captureLogger } from '../../core/fakes.ts';
import { sandboxDrainer } from './sandbox-drainer.ts';
import { onComputeA, sandboxNova } from './sandbox-nova.ts';

const sb = sandboxNova();
const server = (id: string) => sb.cloud.state.server(id)!;
const lastMigration = (id: string) => sb.cloud.state.migrations(id).at(-1)?.status;
const liveMigrate = (id: string) =>
  sb.asAdmin('POST', `/servers/${id}/action`, {
    'os-migrateLive': { host: null, block_migration: 'auto' },
  });

/** compute-a with `servers`, Nova's scheduler taking 30 s unless told; drainer's log is kept. */
async function world(
  servers: ServerSpec[],
  o: { timings?: Partial<ComputeTimings>; hosts?: HostSpec[] } = {},
) {
  const clock = await sb.start(
    {
      hosts: [{ name: 'compute-a' }, ...(o.hosts ?? [{ name: 'compute-b' }])],
      servers,
      timings: { scheduleMs: 30_000, ...o.timings },
    },
    20,
  );
  const { log, lines } = captureLogger();
  const drainer = sandboxDrainer(sb.cloud, clock, {}, undefined, 'compute-a', log);
  /** What drainer said of one server. */
  const said = (id: string) =>
    lines
      .map((l) => JSON.parse(l) as { server?: string; msg: string })
      .filter((l) => l.server === id)
      .map((l) => l.msg);
  return { drainer, said };
}

describe('a live migration still accepted by Nova at the shutdown deadline', () => {
  it('that then queues behind a running move is taken out of the queue, and the server stopped and marked', async () => {
    const { drainer, said } = await world([
      onComputeA('vm-moving', { migrationMs: 600_000 }),
      onComputeA('vm-late', { shutdownMs: 5000 }),
    ]);
    await liveMigrate('vm-moving');
    await until(() => (lastMigration('vm-moving') === 'running' ? true : undefined), 'vm-moving running');
    await liveMigrate('vm-late'); // accepted for 30 s, then queued behind vm-moving (one at a time)

    const r = await drainer.atShutdown(120_000);

    expect(r).toEqual({ stopped: ['vm-late'], migrating: ['vm-moving'], left: [] });
    expect(stopMarkOf(server('vm-late'))).toMatchObject({ node: 'compute-a', trigger: 'shutdown' });
    expect(lastMigration('vm-late')).toBe('cancelled');
    await until(() => (server('vm-late').status === 'SHUTOFF' ? true : undefined), 'vm-late stopped');
    expect(server('vm-late').host).toBe('compute-a');
    expect(said('vm-late').join('\n')).toMatch(/accepted.*queued.*stopped/);
  });

  it('that then starts is left to finish', async () => {
    const { drainer, said } = await world([onComputeA('vm-late', { migrationMs: 600_000 })]);
    await liveMigrate('vm-late'); // accepted for 30 s, then runs: nothing ahead of it

    const r = await drainer.atShutdown(120_000);

    expect(r).toEqual({ stopped: [], migrating: ['vm-late'], left: [] });
    expect(lastMigration('vm-late')).toMatch(/^(preparing|running)$/);
    expect(server('vm-late').metadata).toEqual({});
    expect(said('vm-late').join('\n')).toMatch(/accepted.*(preparing|running).*left to finish/);
  });

  it('that then finds no host is stopped: the server is back to ACTIVE here', async () => {
    const { drainer, said } = await world([onComputeA('vm-late', { shutdownMs: 5000 })], {
      hosts: [{ name: 'compute-b', disabled: { reason: 'maintenance' } }],
    });
    await liveMigrate('vm-late'); // accepted for 30 s, then NoValidHost: error, the server ACTIVE on compute-a

    const r = await drainer.atShutdown(120_000);

    expect(r).toEqual({ stopped: ['vm-late'], migrating: [], left: [] });
    expect(lastMigration('vm-late')).toBe('error');
    expect(stopMarkOf(server('vm-late'))).toMatchObject({ node: 'compute-a', trigger: 'shutdown' });
    expect(said('vm-late').join('\n')).toMatch(/accepted.*ended here.*stopped/);
  });

  it('is waited for only within the margin: still accepted then, the server is left and named', async () => {
    // Nova's conductor takes an hour; drainer has 20 s (1 s real) and no signal ends its wait for it
    const { drainer } = await world([onComputeA('vm-late')], { timings: { scheduleMs: 3_600_000 } });
    await liveMigrate('vm-late');

    const r = await drainer.atShutdown(20_000);

    expect(r.stopped).toEqual([]);
    expect(r.migrating).toEqual([]);
    expect(r.left).toEqual([{ id: 'vm-late', why: expect.stringMatching(/still accepted/) as string }]);
    expect(lastMigration('vm-late')).toBe('accepted');
    expect(server('vm-late').metadata).toEqual({});
  });
});

describe('a queued live migration at the shutdown deadline', () => {
  it('taken out of the queue, is waited for only within the margin too: Nova slow to clear its task, the server is left and named', async () => {
    // Nova's compute takes an hour to cancel the queued move; drainer has 20 s (1 s real), no signal
    const { drainer } = await world(
      [onComputeA('vm-moving', { migrationMs: 600_000 }), onComputeA('vm-late')],
      { timings: { scheduleMs: 1000, abortMs: 3_600_000 } },
    );
    await liveMigrate('vm-moving');
    await until(() => (lastMigration('vm-moving') === 'running' ? true : undefined), 'vm-moving running');
    await liveMigrate('vm-late');
    await until(() => (lastMigration('vm-late') === 'queued' ? true : undefined), 'vm-late queued');

    const r = await drainer.atShutdown(20_000);

    expect(r.stopped).toEqual([]);
    expect(r.left).toEqual([
      {
        id: 'vm-late',
        why: expect.stringMatching(/taken out of the queue; Nova had not cleared its task/) as string,
      },
    ]);
    expect(server('vm-late').metadata).toEqual({});
  });
});
