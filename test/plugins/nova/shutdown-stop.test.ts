// Story (issue 49): the host goes down by itself and logind's time is up with servers still on it. The
// Nova plugin stops each one that runs idle, marking it first (drainer.dev:stopped, trigger shutdown), so
// Nova knows it is stopped and the restore after boot starts it; a live migration under way is left to
// finish; one queued behind it, which would never start before the host goes down, is taken out of the
// queue and stopped; a server already off is left as it is. Against the sandbox Nova, on a clock 20× faster:
// vm-moving's 60 s are 3 s real, for drainer's reads at the deadline to find it still moving (at ×100,
// 0.6 s real, which a loaded machine can use up, and vm-queued's move runs instead of waiting).
import { describe, expect, it } from 'vitest';
import { STOP_MARK_KEY, stopMarkOf } from '../../../src/plugins/nova/stop-mark.ts';
import type { ServerSpec } from '../../../src/sandbox/openstack/index.ts';
import { until } from '../../sandbox/openstack/client.ts';
import { sandboxDrainer } from './sandbox-drainer.ts';
import { onComputeA, sandboxNova } from './sandbox-nova.ts';

const sb = sandboxNova();
const vm = (name: string, extra: Partial<ServerSpec> = {}) =>
  onComputeA(name, { shutdownMs: 5000, ...extra });

const server = (id: string) => sb.cloud.state.server(id)!;
const idle = (id: string, status: string) => () =>
  server(id).status === status && !server(id).taskState ? true : undefined;

async function world() {
  const clock = await sb.start(
    {
      hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
      servers: [
        vm('vm-1'),
        vm('vm-2'),
        vm('vm-moving', { migrationMs: 60_000 }),
        vm('vm-queued'),
        vm('vm-off', { status: 'SHUTOFF' }),
      ],
    },
    20,
  );
  // live migrations of vm-moving, under way when the time is up, and of vm-queued, queued behind it
  // (Nova runs one at a time per host by default)
  for (const id of ['vm-moving', 'vm-queued'])
    await sb.asAdmin('POST', `/servers/${id}/action`, {
      'os-migrateLive': { host: null, block_migration: 'auto' },
    });
  // Nova schedules each first (task migrating, migration accepted) and only then queues vm-queued
  // behind the one running; this story starts from the queue (the accepted case: shutdown-accepted)
  await until(
    () => (sb.cloud.state.migrations('vm-queued').at(-1)?.status === 'queued' ? true : undefined),
    'vm-queued queued',
  );
  return sandboxDrainer(sb.cloud, clock);
}

describe("a host shutdown's fallback for Nova", () => {
  it('stops the servers still running there, marked (a queued migration taken out first), leaves a running live migration to finish, and the restore after boot starts them', async () => {
    const a = await world();

    const r = await a.atShutdown();

    expect([...r.stopped].sort()).toEqual(['vm-1', 'vm-2', 'vm-queued']);
    expect(r.migrating).toEqual(['vm-moving']);
    expect(r.left).toEqual([{ id: 'vm-off', why: 'SHUTOFF' }]);
    for (const id of ['vm-1', 'vm-2', 'vm-queued']) {
      expect(stopMarkOf(server(id))).toMatchObject({ node: 'compute-a', trigger: 'shutdown' });
      await until(idle(id, 'SHUTOFF'), `${id} stopped`);
    }
    await until(() => (server('vm-moving').host === 'compute-b' ? true : undefined), 'moved');
    expect(server('vm-moving').status).toBe('ACTIVE');
    expect(server('vm-off').metadata[STOP_MARK_KEY]).toBeUndefined();

    await a.restore(); // after boot, with no record of its own: the marks say what to start
    expect(server('vm-queued').host).toBe('compute-a');
    for (const id of ['vm-1', 'vm-2', 'vm-queued']) {
      await until(idle(id, 'ACTIVE'), `${id} started`);
      expect(server(id).metadata[STOP_MARK_KEY]).toBeUndefined();
    }
    expect(server('vm-off').status).toBe('SHUTOFF');
  });

  it("plans each server with its memory (its flavor's RAM), for the estimate against logind's time", async () => {
    const a = await world();
    const plan = await a.plan();
    expect(plan.workloads.find((w) => w.name === 'vm-1')?.memoryBytes).toBe(
      server('vm-1').ramMb * 1024 * 1024,
    );
  });
});
