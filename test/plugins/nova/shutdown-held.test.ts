// Story (issue 49): logind's time is up while drainer's own evacuation still runs, its moves queued in
// Nova behind a running one. The fallback takes them out of the queue and stops the servers; the
// evacuation, in the same agent, sees its migrations cancelled, and must not submit them again: a move
// sent then keeps the server from stopping (Nova refuses os-stop while it migrates), or moves the
// stopped server cold as the host goes down. Until logind's deadline the evacuation starts nothing.
// Against the sandbox Nova on a clock 20× faster (each copy outlasts the story).
import { describe, expect, it } from 'vitest';
import { stopMarkOf } from '../../../src/plugins/nova/stop-mark.ts';
import { until } from '../../sandbox/openstack/client.ts';
import { sandboxDrainer } from './sandbox-drainer.ts';
import { onComputeA, sandboxNova } from './sandbox-nova.ts';

const sb = sandboxNova();
const server = (id: string) => sb.cloud.state.server(id)!;
const moves = (id: string) => sb.cloud.state.migrations(id);

describe("a host shutdown's fallback during drainer's own evacuation", () => {
  it('stops the servers whose moves it took out of the queue, and the evacuation submits none of them again before the deadline', async () => {
    const clock = await sb.start(
      {
        hosts: [{ name: 'compute-a' }, { name: 'compute-b' }],
        servers: [
          onComputeA('vm-1', { migrationMs: 600_000, shutdownMs: 5000 }),
          onComputeA('vm-2', { migrationMs: 600_000, shutdownMs: 5000 }),
          onComputeA('vm-3', { migrationMs: 600_000, shutdownMs: 5000 }),
        ],
      },
      20,
    );
    const drainer = sandboxDrainer(sb.cloud, clock, { maxConcurrentMigrations: 1 });
    const evacuation = new AbortController();
    const evacuating = drainer.evacuate({ signal: evacuation.signal });
    // one runs (Nova's one slot on the host), the other two are queued behind it
    const ids = ['vm-1', 'vm-2', 'vm-3'];
    const queued = await until(() => {
      const q = ids.filter((id) => moves(id).at(-1)?.status === 'queued');
      return q.length === 2 ? q : undefined;
    }, 'two moves queued behind the running one');
    const running = ids.filter((id) => !queued.includes(id));

    const margin = 20_000; // logind's deadline is twice this away
    const r = await drainer.atShutdown(margin);

    expect([...r.stopped].sort()).toEqual(queued);
    expect(r.migrating).toEqual(running);
    for (const id of r.stopped) {
      expect(stopMarkOf(server(id))).toMatchObject({ node: 'compute-a', trigger: 'shutdown' });
      await until(() => (server(id).status === 'SHUTOFF' ? true : undefined), `${id} stopped`);
    }
    // ten of the evacuation's polls (2 s) before the deadline: nothing submitted again, stopped on the host
    await clock.sleep(margin);
    for (const id of r.stopped) {
      expect(moves(id).map((m) => m.status)).toEqual(['cancelled']);
      expect(server(id)).toMatchObject({ host: 'compute-a', status: 'SHUTOFF' });
    }

    evacuation.abort(new Error('the agent stops with its host'));
    await evacuating;
  });
});
