// What drainer reports when the host listing alone is not the whole story: an abort that
// races the migration's end, a migration record that failed while Nova still shows the
// server moving, and a confirmResize that Nova is slow to show.
import { beforeEach, describe, expect, it } from 'vitest';
import { FakeNova } from './fake-nova.ts';
import { evacuationContext, harness, offlineNock } from './helpers.ts';

const node = { name: 'compute-a' };

let fake: FakeNova;
offlineNock();
beforeEach(() => {
  fake = new FakeNova();
  fake.install();
});

const migrateCalls = (id: string) =>
  fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/servers/${id}/action`)).length;
// the reads of this host's migration records (source_compute), not the one look for servers on their way in
const recordReads = () =>
  fake.requests.filter(
    (r) => r.method === 'GET' && /\/os-migrations$/.test(r.path) && r.query.has('source_compute'),
  ).length;

describe('after aborting a migration past its deadline', () => {
  it('reports the server moved when the migration completes before the abort takes', async () => {
    const s = fake.addServer({ name: 'racer', host: 'compute-a', ticks: 8, abortTooLate: true });
    const h = harness(fake, { nova: { migrationTimeout: 5, pollInterval: 1 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(fake.count('DELETE', new RegExp(`/servers/${s.id}/migrations/1$`))).toBe(1);
    expect(fake.servers.get(s.id)).toMatchObject({ host: 'compute-b', status: 'ACTIVE' });
    expect(outcome.succeeded).toBe(true);
    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', target: 'compute-b' });
    expect(outcome.workloads[0]?.message).toMatch(/abort came too late/);
  });

  it('waits for Nova to roll back, then reports the server failed on the source', async () => {
    const s = fake.addServer({ name: 'slow-rollback', host: 'compute-a', hang: true, rollbackTicks: 4 });
    fake.addServer({ name: 'next', host: 'compute-a' });
    const h = harness(fake, {
      nova: { migrationTimeout: 5, pollInterval: 1, maxConcurrentMigrations: 1, submitAhead: 0 },
    });
    let rolledBackBeforeReport = true;
    const ctx = evacuationContext(h, {
      onProgress: (items) => {
        // the report may say "failed" only once Nova has the server settled again
        const w = items.find((i) => i.id === s.id);
        if (w?.state === 'failed' && fake.servers.get(s.id)?.task_state !== null)
          rolledBackBeforeReport = false;
      },
    });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(rolledBackBeforeReport).toBe(true);
    const w = outcome.workloads.find((x) => x.id === s.id);
    expect(w).toMatchObject({ state: 'failed', attempts: 1 });
    expect(w?.message).toBe('aborted after 5s (nova.migrationTimeout)');
    expect(fake.migrations[0]?.status).toBe('cancelled');
    // the rollback kept the slot: Nova never had two migrations from this host at once
    expect(fake.maxInFlight).toBe(1);
    expect(outcome.workloads.find((x) => x.name === 'next')?.state).toBe('succeeded');
  });

  it('gives up following a rollback that never ends, and says what Nova last showed', async () => {
    fake.addServer({ name: 'wedged', host: 'compute-a', hang: true, rollbackTicks: 10_000 });
    const h = harness(fake, { nova: { migrationTimeout: 5, pollInterval: 2 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({ state: 'failed' });
    expect(outcome.workloads[0]?.message).toBe(
      'timed out after 5s (aborted migration 1); 30s later Nova still shows the server MIGRATING ' +
        '(task_state migrating, migration 1 running) on compute-a',
    );
    // followed for the grace (30 s), not forever
    expect(h.clock.sleeps.reduce((a, b) => a + b, 0)).toBeLessThan(60_000);
  });
});

describe('migration records', () => {
  it('reports a server whose migration failed while Nova leaves it MIGRATING, long before the deadline', async () => {
    const s = fake.addServer({
      name: 'stuck',
      host: 'compute-a',
      ticks: 3,
      failAttempts: 1,
      stuckOnFailure: true,
    });
    const h = harness(fake, { nova: { migrationTimeout: 1800, pollInterval: 5, retries: 2 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({ state: 'failed', attempts: 1 });
    expect(outcome.workloads[0]?.message).toMatch(
      /^Nova marked migration 1 error, but the server is still MIGRATING \(task_state migrating\)/,
    );
    expect(migrateCalls(s.id)).toBe(1); // Nova would refuse a retry (409): none is sent
    expect(recordReads()).toBe(2); // the first look (60 s), and the one that confirms it stuck
    expect(fake.count('DELETE', /migrations/)).toBe(0);
  });

  it('treats a failed record during the rollback as an ordinary failed attempt, and retries', async () => {
    // Nova's pre-live-migration failure: record `error` first, then a rollback, then the server is reset.
    const s = fake.addServer({
      name: 'rolls-back',
      host: 'compute-a',
      ticks: 12, // fails at 60 s, just as the records are first read
      failAttempts: 1,
      failRollbackTicks: 4,
    });
    const seenAtRead: string[] = [];
    fake.onRequest = (r) => {
      if (r.path.endsWith('/os-migrations') && r.query.has('source_compute'))
        seenAtRead.push(`${fake.migrations[0]?.status} ${fake.servers.get(s.id)?.status}`);
    };
    const h = harness(fake, {
      nova: { pollInterval: 5, retries: 2, retryBackoff: 1, migrationTimeout: 1800 },
    });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(seenAtRead[0]).toBe('error MIGRATING');
    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', attempts: 2, target: 'compute-b' });
    expect(migrateCalls(s.id)).toBe(2);
    expect(fake.migrations.map((m) => m.status)).toEqual(['failed', 'completed']);
  });

  it('reads no records while migrations finish within a minute', async () => {
    for (let i = 0; i < 4; i++) fake.addServer({ name: `vm-${i}`, host: 'compute-a', ticks: 5 });
    const h = harness(fake, { nova: { pollInterval: 5 } });

    await h.plugin.evacuate(node, evacuationContext(h));

    expect(recordReads()).toBe(0);
  });

  it('reads the records of a long migration a few times only, one request for every server', async () => {
    fake.addServer({ name: 'big-1', host: 'compute-a', ticks: 100 });
    fake.addServer({ name: 'big-2', host: 'compute-a', ticks: 100 });
    const h = harness(fake, {
      nova: { pollInterval: 5, maxConcurrentMigrations: 2, migrationTimeout: 1800 },
    });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.succeeded).toBe(true);
    // 500 s each: reads at 60, 120 and 240 s (then 480 s), shared by both servers
    expect(recordReads()).toBe(4);
    const read = fake.requests.find(
      (r) => r.path.endsWith('/os-migrations') && r.query.has('source_compute'),
    )!;
    expect(read.query.get('source_compute')).toBe('compute-a');
    expect(read.query.get('changes-since')).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});

describe('confirming a cold migration', () => {
  it('does not count a 400 to a repeated confirm as a failure when the first one took', async () => {
    const s = fake.addServer({ name: 'stopped', host: 'compute-a', status: 'SHUTOFF', confirmLagTicks: 40 });
    const h = harness(fake, { nova: { pollInterval: 1 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    const confirms = fake.requests.filter(
      (r) => r.method === 'POST' && (r.body as Record<string, unknown> | undefined)?.confirmResize === null,
    );
    expect(confirms.length).toBeGreaterThan(1); // the lag outlasted the re-send window
    expect(h.apiCodes).toContain('nova 400');
    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', target: 'compute-b', attempts: 1 });
    expect(fake.servers.get(s.id)).toMatchObject({ status: 'SHUTOFF', host: 'compute-b' });
    expect(h.lines.some((l) => l.includes('confirmResize failed'))).toBe(false);
  });

  it.each([1, 120])(
    'confirms again at the next look when the answer to its confirm was lost, not a resend window later (pollInterval %i s)',
    async (pollInterval) => {
      // chaos seed 16 round 22: Nova's 503 to hv-3-vm2's confirm ("may have been applied; not sent
      // again"), and the agent confirmed only 30 s later, the window meant for a confirm Nova took
      const s = fake.addServer({ name: 'stopped', host: 'compute-a', status: 'SHUTOFF' });
      const confirmsAt: number[] = [];
      fake.onRequest = (r) => {
        const body = r.body as Record<string, unknown> | undefined;
        if (r.method !== 'POST' || body === undefined) return;
        if (!('confirmResize' in body)) return;
        // the first confirm is answered 503, nothing applied
        if (confirmsAt.length === 0) fake.fail('POST', new RegExp(`/servers/${s.id}/action$`), 503);
        confirmsAt.push(h.clock.now());
      };
      const h = harness(fake, { nova: { pollInterval } });

      const outcome = await h.plugin.evacuate(node, evacuationContext(h));

      expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', target: 'compute-b', attempts: 1 });
      expect(fake.servers.get(s.id)).toMatchObject({ status: 'SHUTOFF', host: 'compute-b' });
      expect(h.apiCodes).toContain('nova 503');
      expect(confirmsAt).toHaveLength(2);
      // read back at the next look (still VERIFY_RESIZE) and sent again: a poll later, well within
      // what an operator watching `openstack server show` would take
      expect(confirmsAt[1]! - confirmsAt[0]!).toBeLessThanOrEqual(2_000);
    },
  );
});
