// Submit-ahead against the sandbox Nova, which (as real Nova) shows a server on its new host while
// the migration record still says `running`: the source's post-live-migration (a resource audit,
// then `completed`) holds Nova's slot for seconds more. drainer's window counts Nova's records,
// so Nova never holds more than M + submitAhead of the host's migrations unfinished.
import { afterEach, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../../src/sandbox/clock.ts';
import {
  startOpenStack,
  type MigrationView,
  type OpenStackSandbox,
} from '../../../src/sandbox/openstack/index.ts';
import { until } from '../../sandbox/openstack/client.ts';
import { sandboxDrainer } from './sandbox-drainer.ts';

let cloud: OpenStackSandbox | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

const FINISHED = new Set(['completed', 'error', 'failed', 'cancelled']);

/** The most live migrations off `host` that Nova's records held unfinished at once, from every change. */
function mostUnfinished(os: OpenStackSandbox, host: string): () => number {
  const open = new Map<number, MigrationView>();
  let most = 0;
  os.state.subscribe((e) => {
    if (e.kind !== 'migration' || e.migration.type !== 'live-migration' || e.migration.sourceHost !== host)
      return;
    if (FINISHED.has(e.migration.status)) open.delete(e.migration.id);
    else open.set(e.migration.id, e.migration);
    most = Math.max(most, open.size);
  });
  return () => most;
}

/** n servers on compute-a (one slot, Nova's default), drainer on the sandbox's clock; Nova's records watched. */
async function evacuated(n: number, nova: Record<string, unknown>) {
  const clock = new ScaledClock(50);
  const ids = Array.from({ length: n }, (_, i) => `sa-${i + 1}`);
  cloud = await startOpenStack({
    clock,
    hosts: [{ name: 'compute-a', maxConcurrentLiveMigrations: 1 }, { name: 'compute-b' }],
    servers: ids.map((id) => ({ id, name: id, projectId: 'demo', host: 'compute-a' })),
  });
  const most = mostUnfinished(cloud, 'compute-a');
  const outcome = await sandboxDrainer(cloud, clock, { maxConcurrentMigrations: 1, ...nova }).evacuate();
  const gets = (what: RegExp) => cloud!.requestLog.filter((r) => r.method === 'GET' && what.test(r.path));
  return {
    ids,
    outcome,
    most: most(),
    polls: gets(/\/servers\/detail\?.*changes-since/).length,
    recordReads: gets(/\/os-migrations\?source_compute=compute-a/).length,
  };
}

describe('submit-ahead counts what Nova counts', () => {
  it('keeps at most M + 1 migrations unfinished in Nova while each record runs on after the host switch', async () => {
    const run = await evacuated(4, { submitAhead: 1 });

    expect(run.outcome.succeeded, JSON.stringify(run.outcome.workloads)).toBe(true);
    expect(run.most).toBe(2);
    // what it costs: a read of the host's records at a poll where only landed migrations held the window
    expect(run.recordReads).toBeGreaterThan(0);
    expect(run.recordReads).toBeLessThanOrEqual(run.polls);
    for (const id of run.ids) {
      expect(cloud!.state.server(id)).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
      // the last record may still be in its post-migration when the evacuation ends
      const statuses = () => cloud!.state.migrations(id).map((m) => m.status);
      await until(() => statuses()[0] !== 'running' || undefined, `${id}'s record ended`);
      expect(statuses()).toEqual(['completed']);
    }
  });

  it('with the default window counts the landed ones as the slot they hold, reading no record', async () => {
    // unset submitAhead at M = 1: 5 queued and 1 for the slot's post-migration, 7 in all
    const run = await evacuated(12, {});

    expect(run.outcome.succeeded, JSON.stringify(run.outcome.workloads)).toBe(true);
    expect(run.most).toBe(7);
    expect(run.recordReads).toBe(0);
  });
});
