// Refusals the plan makes before the first change, and failures under their own reason: rejected
// cloud credentials are CloudAuthFailed (never InsufficientCapacity), missing rights are
// EvacuationBlocked.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';
import { AuthError } from '../../src/errors.ts';
import type { Outcome, Plan, WorkloadProgress } from '../../src/core/backends/plugin.ts';
import { Reconciler } from '../../src/core/agent/reconciler.ts';
import { EVACUATING_TAINT } from '../../src/core/record/record.ts';
import {
  failedAfterChanges,
  FakeCluster,
  FakeHost,
  quietLogger,
  succeeded,
  type FakePlugin,
} from './fakes.ts';

const rejected = () =>
  new AuthError('keystone POST /v3/auth/tokens → 401: credentials rejected', {
    api: 'keystone',
    status: 401,
  });

type Evacuate = FakePlugin['evacuate'];

function setup(plan: () => Plan, evacuate: Evacuate = async () => succeeded('nova', ['vm-1'])) {
  const cluster = new FakeCluster();
  const host = new FakeHost([{ name: 'nova', plan, evacuate }]);
  const config = configSchema.parse({ resyncInterval: 0, evacuation: { capacityCheck: 'enforce' } });
  const reconciler = new Reconciler({ cluster, host, config, log: quietLogger() });
  cluster.addNode('node-7', { unschedulable: true });
  return { cluster, host, reconcile: () => reconciler.reconcile('node-7', new AbortController().signal) };
}

const messages = (c: FakeCluster, reason: string) =>
  c.events.filter((e) => e.reason === reason).map((e) => e.message);

describe('refused before the first change', () => {
  it('a Keystone 401 while planning fails as CloudAuthFailed, not InsufficientCapacity', async () => {
    const { cluster, host, reconcile } = setup(() => {
      throw rejected();
    });

    await reconcile();

    expect(host.evacuateCalls).toBe(0);
    expect(cluster.node('node-7').spec.taints ?? []).toEqual([]);
    expect(cluster.record('node-7')).toMatchObject({ phase: 'Failed', failureReason: 'CloudAuthFailed' });
    expect(messages(cluster, 'CloudAuthFailed')).toEqual([
      expect.stringMatching(/401: credentials rejected/),
    ]);
    expect(messages(cluster, 'InsufficientCapacity')).toEqual([]);
  });

  it('a plan-wide blocker (missing rights) refuses with EvacuationBlocked, nothing changed', async () => {
    const message =
      "nova: Nova hides the servers' host from drainer's credentials; give drainer the admin role";
    const { cluster, host, reconcile } = setup(() => ({
      plugin: 'nova',
      workloads: [],
      blockers: [{ kind: 'missing-rights', message }],
    }));

    await reconcile();

    expect(host.evacuateCalls).toBe(0);
    expect(cluster.node('node-7').spec.taints ?? []).toEqual([]);
    expect(cluster.writes.filter((w) => !w.startsWith('annotation'))).toEqual([]);
    expect(cluster.record('node-7')).toMatchObject({
      phase: 'Failed',
      failureReason: 'EvacuationBlocked',
      lastError: message,
    });
    expect(messages(cluster, 'EvacuationBlocked')).toContain(message);
  });

  it('a node refused for a workload that cannot move stays Failed while it is re-checked, and goes on once the owner acts', async () => {
    // chaos seed 460708: hv-1 was re-checked every resync, and each re-check wrote Evacuating for a
    // moment: the soak's last look found it there
    let way: 'none' | 'live-migrate' = 'none';
    let plans = 0;
    const { cluster, host, reconcile } = setup(() => {
      plans++;
      return {
        plugin: 'nova',
        workloads: [
          { id: 'db-7', name: 'db-7', owner: 'p', state: 'ACTIVE', action: way, blocker: 'way out stop' },
        ],
      };
    });
    await reconcile();
    const refused = cluster.record('node-7');
    expect(refused).toMatchObject({ phase: 'Failed', failureReason: 'EvacuationBlocked' });
    const writes = cluster.writes.length;
    const events = cluster.events.length;

    await reconcile();
    await reconcile();

    // looked at again (its plan), and nothing written: not Evacuating for a moment, no Event again
    expect(plans).toBe(3);
    expect(cluster.writes.length).toBe(writes);
    expect(cluster.events.length).toBe(events);
    expect(cluster.record('node-7')).toEqual(refused);

    way = 'live-migrate'; // the owner chose another way out
    await reconcile();

    expect(host.evacuateCalls).toBe(1);
    expect(cluster.record('node-7')?.phase).toBe('Evacuated');
  });

  it('credentials rejected during the evacuation fail it as CloudAuthFailed', async () => {
    const { cluster, reconcile } = setup(
      () => ({ plugin: 'nova', workloads: [] }),
      async () => {
        throw rejected();
      },
    );

    await reconcile();

    expect(cluster.record('node-7')).toMatchObject({ phase: 'Failed', failureReason: 'CloudAuthFailed' });
    expect(messages(cluster, 'CloudAuthFailed')).toHaveLength(1);
    expect(messages(cluster, 'EvacuationFailed')).toEqual([]);
  });
});

describe("Nova's own reason", () => {
  it('travels from the outcome into the MigrationFailed Event and the record that drainer status shows', async () => {
    const why =
      'failed after 3 attempt(s): server went to ERROR during live-migrate; Nova: No valid host was found (migration 12 error)';
    const web: WorkloadProgress = {
      id: 'srv-1',
      name: 'web',
      state: 'failed',
      action: 'live-migrate',
      attempts: 3,
      message: why,
    };
    const outcome: Outcome = {
      plugin: 'nova',
      succeeded: false,
      workloads: [web],
      message: '0 of 1 server(s) moved, 1 failed',
    };
    const { cluster, reconcile } = setup(
      () => ({ plugin: 'nova', workloads: [] }),
      async (ctx) => {
        ctx.progress([web]);
        return outcome;
      },
    );

    await reconcile();

    expect(messages(cluster, 'MigrationFailed')).toEqual([`nova: web (srv-1): ${why}`]);
    expect(cluster.record('node-7')?.lastError).toContain(
      'Nova: No valid host was found (migration 12 error)',
    );
  });

  it('a retry of a Failed evacuation that changed things is not refused as if nothing was changed', async () => {
    const { cluster, host, reconcile } = setup(() => ({
      plugin: 'nova',
      workloads: [
        {
          id: 'db-7',
          name: 'db-7',
          owner: 'p',
          state: 'ACTIVE',
          action: 'none',
          blocker: 'server is locked',
        },
      ],
    }));
    cluster.node('node-7').spec.taints = [{ ...EVACUATING_TAINT }];
    await cluster.setNodeAnnotation('node-7', 'drainer.dev/state', JSON.stringify(failedAfterChanges()));

    await reconcile();

    // it resumes (the plugin reports the locked server itself) instead of claiming nothing changed
    expect(host.evacuateCalls).toBe(1);
    expect(messages(cluster, 'EvacuationBlocked').join()).not.toMatch(
      /nothing was changed|before any change/,
    );
  });
});
