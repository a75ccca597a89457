// Story: a busy VM dirties memory faster than the link copies it, so its live migration never
// converges. drainer sees what is left stop falling, forces the migration to complete once (or
// aborts it, with onStall: abort), and never forces twice across a restart. And a migration Nova
// marks completed while the server stays on its source is reported at once.
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeList } from '../../src/kube/types.ts';
import { smallWorld } from './scenario.ts';
import { finished, startStack, until, type EventObject, type Stack } from './stack.ts';

/** vm-1 is quiet; vm-2 holds 8 GiB and dirties 4 GB/s, far above the link: it never converges. */
function busyWorld(opts: { link?: number; faults?: object } = {}) {
  const world = smallWorld({ servers: 2, ...(opts.faults ? { faults: opts.faults } : {}) });
  const [quiet, busy] = world.openstack.servers;
  return {
    ...world,
    openstack: {
      ...world.openstack,
      hosts: world.openstack.hosts.map((h) =>
        h.name === 'node-a' && opts.link ? { ...h, migrationMbPerSecond: opts.link } : h,
      ),
      servers: [quiet!, { ...busy!, project: 'beta', ramMb: 8192, dirtyMbPerSecond: 4000 }],
    },
  };
}

const forces = (stack: Stack) =>
  stack.sandbox.openstack.requestLog.filter(
    (r) => r.method === 'POST' && /\/migrations\/\d+\/action$/.test(r.path),
  );

describe('busy VMs (full stack)', () => {
  let stack: Stack | undefined;
  afterEach(async () => stack?.close());

  it('forces a stalled migration to complete exactly once, and the evacuation succeeds', async () => {
    stack = await startStack({ scenario: busyWorld(), config: { nova: { stallAfter: 1 } } });
    const os = stack.sandbox.openstack.state;
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    const stalled = await until('progress shows vm-2 not converging', async () => {
      const copies = (await stack?.record('node-a'))?.progress?.nova?.copies;
      return copies?.find((c) => c.name === 'vm-2' && !c.converging);
    });
    const rec = await finished(stack, 'node-a');

    expect(rec.phase).toBe('Evacuated');
    expect(os.serversOnHost('node-a')).toEqual([]);
    expect(forces(stack)).toHaveLength(1);
    expect(stalled).toMatchObject({ totalBytes: 8192 * 1024 * 1024, stallAction: 'force-complete' });
    expect(stalled.remainingBytes).toBeGreaterThan(0);
    const events = await stack.k.request<KubeList<EventObject>>({
      path: '/api/v1/namespaces/default/events',
    });
    const stall = events.items.find((e) => e.reason === 'MigrationStalled');
    expect(stall?.message).toMatch(
      /vm-2 \(.+\) of project \S+: live migration \d+ stalled at \d+ % .*forced to complete/,
    );
    // the quiet one never had its progress read: one look per server at most is the budget
    const vm1 = os.servers().find((s) => s.name === 'vm-1')!;
    const reads = stack.sandbox.openstack.requestLog.filter(
      (r) => r.method === 'GET' && r.path.includes(`/servers/${vm1.id}/migrations`),
    );
    expect(reads).toEqual([]);
  });

  it('with onStall: abort the evacuation fails after its retries, naming the stall', async () => {
    stack = await startStack({
      scenario: busyWorld(),
      config: { nova: { stallAfter: 1, onStall: 'abort', retries: 1 } },
    });
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    const rec = await finished(stack, 'node-a');

    expect(rec.phase).toBe('Failed');
    expect(rec.lastError).toMatch(
      /vm-2 \(failed: failed after 2 attempt\(s\): live migration \d+ stalled at .*aborted \(nova\.onStall: abort\)/,
    );
    expect(forces(stack)).toEqual([]);
    const aborts = stack.sandbox.openstack.requestLog.filter(
      (r) => r.method === 'DELETE' && r.path.includes('/migrations/'),
    );
    expect(aborts).toHaveLength(2);
    expect(stack.sandbox.openstack.state.serversOnHost('node-a').map((s) => s.name)).toEqual(['vm-2']);
  }, 30_000);

  it('a restart while the forced migration finishes sends no second force-complete', async () => {
    // a slow link: the forced finish (3.2 GiB left) takes a while, long enough for a restart
    stack = await startStack({ scenario: busyWorld({ link: 100 }), config: { nova: { stallAfter: 1 } } });
    const first = stack.startAgent('node-a');
    await until('first agent ready', () => first.agent.ready().ready);
    await stack.cordon('node-a');
    await until('forced once', () => forces(stack!).length === 1, 30_000);
    await first.stop();
    const vm2 = stack.sandbox.openstack.state.servers().find((s) => s.name === 'vm-2')!;
    // still finishing when the next agent takes over: it adopts a stalled, already forced migration
    expect(stack.sandbox.openstack.state.migrations(vm2.id).map((m) => m.status)).toEqual(['running']);

    const second = stack.startAgent('node-a');
    const rec = await until(
      'evacuated by the second agent',
      async () => {
        const r = await stack?.record('node-a');
        return r?.phase === 'Evacuated' || r?.phase === 'Failed' ? r : undefined;
      },
      30_000,
    );

    expect(rec.phase).toBe('Evacuated');
    expect(forces(stack)).toHaveLength(1);
    expect(stack.logLines.some((l) => l.includes('forced to complete earlier'))).toBe(true);
    expect(second.agent.ready().ready).toBe(true);
  }, 60_000);

  it('a migration completed while the server stays on its source is reported within a poll or two', async () => {
    stack = await startStack({
      scenario: busyWorld({ faults: { completeWithoutMove: ['vm-1'] } }),
      config: { nova: { stallAfter: 1, retries: 0 } },
    });
    // Nova's record says completed while the server never left: the move did not happen, and drainer
    // says so (failure-for-completed-move reads where the server is, and agrees)
    const os = stack.sandbox.openstack;
    const vm1 = os.state.servers().find((s) => s.name === 'vm-1')!;
    const agent = stack.startAgent('node-a');
    await until('agent ready', () => agent.agent.ready().ready);

    await stack.cordon('node-a');
    const rec = await finished(stack, 'node-a');

    const m = os.state.migrations(vm1.id).find((x) => x.status === 'completed')!;
    expect(rec.phase).toBe('Failed');
    expect(rec.lastError).toContain(
      `Nova marked migration ${m.id} completed, but server vm-1 (${vm1.id}) is still on node-a`,
    );
    // from the first read of the records that saw it, at most the grace (two polls) and one more
    const seenAt = os.requestLog.find((r) => r.path.includes('/os-migrations') && r.at >= m.updatedAt)!.at;
    const pollsAfter = os.requestLog.filter((r) => r.path.includes('/servers/detail') && r.at > seenAt);
    expect(pollsAfter.length).toBeLessThanOrEqual(4);
  });
});
