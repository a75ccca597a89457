// Story (issue 48): KubeVirt's migration queue is full (parallelMigrationsPerCluster: 1). A VMI's
// first attempt fails and its retry waits behind the others, longer than its per-VMI deadline.
// The deadline runs while a migration of it runs and through KubeVirt's backoff after the failure
// (20 s, as KubeVirt counts it: about 5 + 20 + 5 s here, with the hand-offs), not while the retry waits its turn in the
// queue: it is still followed, and reported moved.
import { describe, expect, it } from 'vitest';
import { byName, context, migrationsOf, nodeOf, vm, worldPerTest } from './harness.ts';

const world = worldPerTest();

describe('KubeVirt plugin, a retry queued behind others', () => {
  it('waits past its 40 s deadline in the queue, and is reported moved', async () => {
    // a 10x clock: each migration's steps take their time even on a busy machine
    const w = await world(
      {
        parallelMigrationsPerCluster: 1,
        vmis: [
          vm('vm-a-fails', { failFirstAttempts: 1, migrationSeconds: 4 }),
          ...['vm-b', 'vm-c', 'vm-d'].map((name) => vm(name, { migrationSeconds: 20 })),
        ],
      },
      10,
    );

    const outcome = await w.plugin({ migrationTimeout: 40 }).evacuate({ name: 'node-1' }, context());

    expect(outcome.succeeded).toBe(true);
    expect(byName(outcome)['vms/vm-a-fails']).toMatchObject({ state: 'succeeded', attempts: 2 });
    // it waited in the queue behind others (one at a time) past its 40 s deadline, and was not failed for it;
    // how many went first depends on when its retry was queued, so the story asks only for the deadline
    expect(byName(outcome)['vms/vm-a-fails']?.durationMs).toBeGreaterThan(40_000);
    expect(nodeOf(w, 'vm-a-fails')).not.toBe('node-1');
    expect(
      migrationsOf(w, 'vm-a-fails')
        .map((m) => (m.status as { phase?: string }).phase)
        .sort(),
    ).toEqual(['Failed', 'Succeeded']);
    expect(w.sb.controllers.migrations.maxInFlight).toBe(1);
  });
});
