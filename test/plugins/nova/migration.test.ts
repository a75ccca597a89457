import { beforeEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../../src/errors.ts';
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

describe('moving servers', () => {
  it('cold-migrates a SHUTOFF server and confirms the resize', async () => {
    const s = fake.addServer({ name: 'stopped', host: 'compute-a', status: 'SHUTOFF' });
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({
      state: 'succeeded',
      action: 'cold-migrate',
      target: 'compute-b',
    });
    expect(fake.servers.get(s.id)).toMatchObject({ status: 'SHUTOFF', host: 'compute-b' });
    const bodies = fake.requests
      .filter((r) => r.method === 'POST' && r.path.includes('/action'))
      .map((r) => r.body);
    expect(bodies).toEqual([{ migrate: null }, { confirmResize: null }]);
  });

  it("takes Nova's 400 to its first confirm for another's confirm that came first: no warning, moved", async () => {
    // chaos seed 1: two agents confirmed the same cold migration within 3 ms (the destination's own
    // evacuation found it waiting there); Nova confirmed one and answered the other "not resized"
    const s = fake.addServer({ name: 'stopped', host: 'compute-a', status: 'SHUTOFF' });
    const othersFirst = onceBefore('confirmResize', () => {
      const mig = fake.migrations.find((m) => m.serverId === s.id && m.status === 'finished');
      if (mig) mig.status = 'confirmed';
      s.status = 'SHUTOFF';
    });
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(othersFirst()).toBe(true);
    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', target: 'compute-b' });
    const warnings = h.lines.filter((l) => (JSON.parse(l) as { level: number }).level >= 40);
    expect(warnings).toEqual([]);
  });

  it("meets its owner's shelve as Nova's 409: no failure, it decides again once the shelve ends", async () => {
    // chaos seed 2 round 170: "Nova refused cold-migrate … while it is in task_state shelving",
    // reported failed although its owner was shelving it
    const s = fake.addServer({ name: 'shelving', host: 'compute-a', status: 'SHUTOFF' });
    const shelved = onceBefore('migrate', () => {
      s.task_state = 'shelving'; // the owner's shelve began just before drainer's call
      setTimeout(() => (s.task_state = null), 5); // and ended with the server still there (a failed shelve)
    });
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(shelved()).toBe(true);
    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', action: 'cold-migrate', attempts: 1 });
    expect(fake.servers.get(s.id)?.host).toBe('compute-b');
  });

  it('leaves SHUTOFF servers as blockers when cold migration is off', async () => {
    fake.addServer({ name: 'stopped', host: 'compute-a', status: 'SHUTOFF' });
    const h = harness(fake, { nova: { coldMigrateStopped: false } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.succeeded).toBe(false);
    expect(outcome.workloads[0]).toMatchObject({ state: 'blocked', action: 'none' });
    expect(fake.count('POST', /\/action$/)).toBe(0);
  });

  it('confirms a resize left waiting on the host, then live-migrates the server', async () => {
    const s = fake.addServer({ name: 'resized', host: 'compute-a', status: 'VERIFY_RESIZE' });
    fake.migrations.push({
      id: 99,
      serverId: s.id,
      type: 'migration',
      status: 'finished',
      source: 'compute-b',
      dest: 'compute-a',
      ticksLeft: 0,
      priorStatus: 'ACTIVE',
    });
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({
      state: 'succeeded',
      action: 'live-migrate',
      target: 'compute-b',
    });
    const bodies = fake.requests
      .filter((r) => r.method === 'POST' && r.path.includes('/action'))
      .map((r) => r.body);
    expect(bodies).toEqual([
      { confirmResize: null },
      { 'os-migrateLive': { host: null, block_migration: 'auto' } },
    ]);
  });

  it('reports ERROR, SUSPENDED, RESCUE, SHELVED and locked servers as blockers without touching them', async () => {
    fake.addServer({ name: 'broken', host: 'compute-a', status: 'ERROR' });
    fake.addServer({ name: 'sleeping', host: 'compute-a', status: 'SUSPENDED' });
    fake.addServer({ name: 'rescued', host: 'compute-a', status: 'RESCUE' });
    fake.addServer({ name: 'shelved', host: 'compute-a', status: 'SHELVED' });
    fake.addServer({ name: 'locked', host: 'compute-a', locked: true });
    fake.addServer({ name: 'fine', host: 'compute-a' });
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.succeeded).toBe(false);
    const states = Object.fromEntries(outcome.workloads.map((w) => [w.name, w.state]));
    expect(states).toEqual({
      broken: 'blocked',
      sleeping: 'blocked',
      rescued: 'blocked',
      shelved: 'blocked',
      locked: 'blocked',
      fine: 'succeeded',
    });
    expect(fake.count('POST', /\/action$/)).toBe(1);
    expect(outcome.message).toMatch(/5 blocked/);
  });
});

describe('failures and retries', () => {
  it('retries an attempt that failed asynchronously (server back on the source) and succeeds', async () => {
    const s = fake.addServer({ name: 'flaky', host: 'compute-a', failAttempts: 1 });
    const h = harness(fake, { nova: { retries: 2, retryBackoff: 10 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', attempts: 2, target: 'compute-b' });
    expect(migrateCalls(s.id)).toBe(2);
  });

  it('gives up after nova.retries, with a doubling backoff, and reports the server', async () => {
    const s = fake.addServer({ name: 'doomed', host: 'compute-a', failAttempts: 99 });
    fake.addServer({ name: 'fine', host: 'compute-a' });
    const h = harness(fake, { nova: { retries: 2, retryBackoff: 10, pollInterval: 1 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.succeeded).toBe(false);
    const doomed = outcome.workloads.find((w) => w.name === 'doomed');
    expect(doomed).toMatchObject({ state: 'failed', attempts: 3 });
    expect(doomed?.message).toMatch(/failed after 3 attempt/);
    expect(outcome.workloads.find((w) => w.name === 'fine')?.state).toBe('succeeded');
    expect(migrateCalls(s.id)).toBe(3);
    // the 2nd attempt waited >= 10 s, the 3rd >= 20 s (fake time)
    const starts = h.lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'migration started' && l.server === s.id)
      .map((l) => Date.parse(l.time));
    expect(starts).toHaveLength(3);
    expect(h.lines.some((l) => l.includes('"backoffMs":10000'))).toBe(true);
    expect(h.lines.some((l) => l.includes('"backoffMs":20000'))).toBe(true);
  });

  it('aborts a migration that passes its deadline', async () => {
    const s = fake.addServer({ name: 'stuck', host: 'compute-a', hang: true });
    const h = harness(fake, { nova: { migrationTimeout: 30, pollInterval: 5 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({ state: 'failed' });
    expect(outcome.workloads[0]?.message).toBe('aborted after 30s (nova.migrationTimeout)');
    expect(fake.count('DELETE', new RegExp(`/servers/${s.id}/migrations/1$`))).toBe(1);
    expect(fake.servers.get(s.id)).toMatchObject({ host: 'compute-a', status: 'ACTIVE', task_state: null });
  });

  it('leaves a timed-out migration running when abortOnTimeout is false', async () => {
    fake.addServer({ name: 'stuck', host: 'compute-a', hang: true });
    const h = harness(fake, { nova: { migrationTimeout: 30, pollInterval: 5, abortOnTimeout: false } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]?.message).toMatch(/left running/);
    expect(fake.count('DELETE', /migrations/)).toBe(0);
  });

  it('does not retry a migrate call that Nova answers 409', async () => {
    const s = fake.addServer({ name: 'busy', host: 'compute-a' });
    fake.fail('POST', /\/action$/, 409);
    const h = harness(fake, { nova: { retries: 5 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({ state: 'failed', attempts: 1 });
    expect(outcome.workloads[0]?.message).toMatch(/409/);
    expect(migrateCalls(s.id)).toBe(1);
  });

  it('never re-sends a migrate call answered 503: reads the server back, then tries again as a new attempt', async () => {
    const s = fake.addServer({ name: 'web', host: 'compute-a' });
    fake.fail('POST', /\/action$/, 503, 2);
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', attempts: 3 });
    expect(migrateCalls(s.id)).toBe(3);
    expect(fake.count('GET', new RegExp(`/servers/${s.id}$`))).toBe(2);
    expect(h.apiCodes.filter((c) => c === 'nova 503')).toHaveLength(2);
  });
});

describe('scheduling', () => {
  it('never has more than maxConcurrentMigrations in flight without submit-ahead, and keeps the window full', async () => {
    for (let i = 0; i < 7; i++) fake.addServer({ name: `vm-${i}`, host: 'compute-a', ticks: 2 + (i % 3) });
    const h = harness(fake, { nova: { maxConcurrentMigrations: 3, submitAhead: 0 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.succeeded).toBe(true);
    expect(fake.maxInFlight).toBe(3);
    expect(fake.servers.size).toBe(7);
    expect([...fake.servers.values()].every((s) => s.host === 'compute-b')).toBe(true);
  });

  // M + 3 × M from 2.65, and at least 5 queued: one slot's queue must outlast a run of short copies;
  // and M more, for the slots' post-migrations (a landed migration holds its slot until its record ends)
  it.each([
    { m: 1, window: 7 },
    { m: 2, window: 10 },
    { m: 3, window: 15 },
  ])(
    'keeps $window submitted at maxConcurrentMigrations $m from 2.65, so Nova queues the next ones',
    async ({ m, window }) => {
      for (let i = 0; i < window + 3; i++)
        fake.addServer({ name: `vm-${i}`, host: 'compute-a', ticks: 2 + (i % 3) });
      const h = harness(fake, { nova: { maxConcurrentMigrations: m } });

      const outcome = await h.plugin.evacuate(node, evacuationContext(h));

      expect(outcome.succeeded).toBe(true);
      expect(fake.maxInFlight).toBe(window);
    },
  );

  it('submits nothing ahead below 2.65 (a queued migration cannot be aborted there) unless told to', async () => {
    for (let i = 0; i < 4; i++) fake.addServer({ name: `vm-${i}`, host: 'compute-a', ticks: 2 });
    fake.maxMicroversion = '2.64';
    const h = harness(fake, { nova: { maxConcurrentMigrations: 1 } });
    await h.plugin.evacuate(node, evacuationContext(h));
    expect(fake.maxInFlight).toBe(1);

    for (let i = 0; i < 4; i++) fake.addServer({ name: `more-${i}`, host: 'compute-b', ticks: 2 });
    fake.maxInFlight = 0;
    const told = harness(fake, { nova: { maxConcurrentMigrations: 1, submitAhead: 1 } });
    await told.plugin.evacuate({ name: 'compute-b' }, evacuationContext(told));
    expect(fake.maxInFlight).toBe(2);
  });

  it('counts a migration over when its server lands if the records are forbidden (403), and says so once', async () => {
    for (let i = 0; i < 4; i++) fake.addServer({ name: `vm-${i}`, host: 'compute-a', ticks: 2 });
    // the records' read: whether a landed one still holds its slot
    fake.fail('GET', /\/os-migrations$/, 403, 1, 'source_compute');
    const h = harness(fake, { nova: { maxConcurrentMigrations: 1, submitAhead: 1 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.succeeded).toBe(true);
    expect([...fake.servers.values()].every((s) => s.host === 'compute-b')).toBe(true);
    expect(fake.maxInFlight).toBe(2);
    const reads = fake.requests.filter(
      (r) => r.path.endsWith('/os-migrations') && r.query.has('source_compute'),
    );
    expect(reads).toHaveLength(1);
    expect(h.lines.filter((l) => l.includes('reading migration records is forbidden'))).toHaveLength(1);
  });

  it("starts a queued migration's deadline when it can hold a slot, not when it was submitted", async () => {
    const first = fake.addServer({ name: 'first', host: 'compute-a', ticks: 4 });
    const queued = fake.addServer({ name: 'queued', host: 'compute-a', ticks: 7 });
    const h = harness(fake, {
      nova: { maxConcurrentMigrations: 1, submitAhead: 1, migrationTimeout: 5, pollInterval: 1 },
    });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    // both were submitted at once; "queued" ran 7 s from its submit but only ~3 s from its slot
    expect(fake.maxInFlight).toBe(2);
    expect(outcome.workloads.map((w) => [w.id, w.state])).toEqual(
      expect.arrayContaining([
        [first.id, 'succeeded'],
        [queued.id, 'succeeded'],
      ]),
    );
    expect(fake.count('DELETE', /\/migrations\/\d+$/)).toBe(0);
  });

  it('polls with one request for what changed, not a listing plus one GET per server', async () => {
    for (let i = 0; i < 5; i++) fake.addServer({ name: `vm-${i}`, host: 'compute-a', ticks: 3 });
    const h = harness(fake, { nova: { maxConcurrentMigrations: 5 } });

    await h.plugin.evacuate(node, evacuationContext(h));

    const lists = fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/servers/detail'));
    // a listing of the host first and last; every poll between asks for the changes only
    expect(lists[0]?.query.get('host')).toBe('compute-a');
    expect(lists.at(-1)?.query.get('host')).toBe('compute-a');
    const between = lists.slice(1, -1);
    expect(between.length).toBeGreaterThan(0);
    expect(between.every((r) => r.query.get('changes-since') && !r.query.get('host'))).toBe(true);
    expect(fake.count('GET', /\/servers\/srv-\d+$/)).toBe(0);
  });

  it('resumes without starting a second migration for a server already migrating', async () => {
    const moving = fake.addServer({ name: 'moving', host: 'compute-a', ticks: 3 });
    fake.addServer({ name: 'waiting', host: 'compute-a' });
    // an earlier run started "moving", then the agent restarted
    fake.servers.get(moving.id)!.status = 'MIGRATING';
    fake.servers.get(moving.id)!.task_state = 'migrating';
    fake.migrations.push({
      id: 7,
      serverId: moving.id,
      type: 'live-migration',
      status: 'running',
      source: 'compute-a',
      dest: 'compute-b',
      ticksLeft: 3,
      priorStatus: 'ACTIVE',
    });
    fake.inFlight = 1;
    const record = {
      host: 'compute-a',
      serviceId: 'svc-uuid-compute-a',
      disabledByUs: true,
      reason: 'drainer: cordon 2030-01-01T00:00:00.000Z',
      microversion: '2.90',
      migrations: { [moving.id]: { attempts: 1, startedAt: '2030-01-01T00:00:00.000Z' } },
    };
    Object.assign(fake.service('compute-a'), { status: 'disabled', disabled_reason: record.reason });
    const h = harness(fake, { nova: { maxConcurrentMigrations: 1, submitAhead: 0 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h, { record }));

    expect(migrateCalls(moving.id)).toBe(0);
    expect(outcome.workloads.find((w) => w.name === 'moving')).toMatchObject({
      state: 'succeeded',
      attempts: 1,
    });
    expect(outcome.workloads.find((w) => w.name === 'waiting')).toMatchObject({
      state: 'succeeded',
      attempts: 1,
    });
    expect(fake.maxInFlight).toBe(1);
    expect(fake.count('PUT', /os-services/)).toBe(0); // still disabled by us: nothing to do
  });
});

/** The evacuation's context: an uncordon cancels it once a server is migrating. */
const cancelledOnceMigrating = (h: ReturnType<typeof harness>, o: { abortOnCancel: boolean }) =>
  evacuationContext(h, {
    ...o,
    onProgress: (items, controller) => {
      if (items.some((i) => i.state === 'migrating')) controller.abort(new CancelledError('uncordoned'));
    },
  });

describe('dry run and cancel', () => {
  it('plans only in a dry run: no service change, no migration', async () => {
    fake.addServer({ name: 'web', host: 'compute-a' });
    fake.addServer({ name: 'broken', host: 'compute-a', status: 'ERROR' });
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h, { dryRun: true }));

    expect(outcome.workloads.map((w) => [w.name, w.state, w.action])).toEqual([
      ['web', 'pending', 'live-migrate'],
      ['broken', 'blocked', 'none'],
    ]);
    expect(fake.requests.filter((r) => r.method !== 'GET' && !r.path.includes('auth'))).toEqual([]);
    expect(fake.service('compute-a').status).toBe('enabled');
  });

  it('stops starting migrations when cancelled and, with abortOnCancel, aborts the running one', async () => {
    for (let i = 0; i < 3; i++) fake.addServer({ name: `vm-${i}`, host: 'compute-a', hang: true });
    const h = harness(fake, { nova: { submitAhead: 0 } });
    const ctx = cancelledOnceMigrating(h, { abortOnCancel: true });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(outcome.succeeded).toBe(false);
    expect(fake.count('POST', /\/action$/)).toBe(1);
    expect(fake.count('DELETE', /\/migrations\/\d+$/)).toBe(1);
    expect(outcome.workloads.map((w) => w.state).sort()).toEqual(['failed', 'pending', 'pending']);
    expect(outcome.message).toMatch(/cancelled/);
  });

  it('reports a server that moved before the uncordon could abort it as moved, not failed', async () => {
    fake.addServer({ name: 'quick', host: 'compute-a', ticks: 50 });
    const h = harness(fake, { nova: { submitAhead: 0 } });
    const ctx = evacuationContext(h, {
      abortOnCancel: true,
      onProgress: (items, controller) => {
        if (!items.some((i) => i.state === 'migrating') || controller.signal.aborted) return;
        // Nova finishes the migration just before the uncordon reaches the plugin
        for (let i = 0; i < 50; i++) fake.tick();
        controller.abort(new CancelledError('uncordoned'));
      },
    });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(fake.servers.get(outcome.workloads[0]?.id ?? '')?.host).toBe('compute-b');
    expect(fake.count('DELETE', /\/migrations\/\d+$/)).toBe(0); // nothing left to abort
    expect(outcome.workloads).toMatchObject([{ name: 'quick', state: 'succeeded', target: 'compute-b' }]);
  });

  it('follows an aborted migration to its end: one Nova finishes all the same is moved, not failed', async () => {
    fake.addServer({ name: 'past-return', host: 'compute-a', hang: true, abortTooLate: true });
    fake.tickOnMigrationList = true;
    const h = harness(fake, { nova: { submitAhead: 0 } });
    const ctx = cancelledOnceMigrating(h, { abortOnCancel: true });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(fake.count('DELETE', /\/migrations\/\d+$/)).toBe(1); // the abort was sent and accepted
    expect(fake.servers.get(outcome.workloads[0]?.id ?? '')?.host).toBe('compute-b');
    expect(outcome.workloads).toMatchObject([
      { name: 'past-return', state: 'succeeded', target: 'compute-b' },
    ]);
    expect(outcome.workloads[0]?.message).toMatch(/the cancel came too late: aborted migration/);
  });

  it('leaves one still being scheduled to Nova: the abort finds nothing to stop, and it moves all the same', async () => {
    // chaos seed 2 round 4: reported failed ("no migration in progress to abort"), then it moved
    fake.addServer({ name: 'scheduling', host: 'compute-a', schedulingTicks: 20, ticks: 2 });
    const h = harness(fake, { nova: { submitAhead: 0 } });
    const ctx = cancelledOnceMigrating(h, { abortOnCancel: true });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(fake.count('DELETE', /\/migrations\/\d+$/)).toBe(0);
    expect(outcome.workloads).toMatchObject([{ name: 'scheduling', state: 'migrating' }]);
    expect(outcome.workloads[0]?.message).toMatch(/no migration in progress to abort.*left to finish/);
    for (let i = 0; i < 30; i++) fake.tick();
    expect(fake.servers.get(outcome.workloads[0]?.id ?? '')?.host).toBe('compute-b');
  });

  it('aborts the migrations submitted ahead when cancelled, and leaves the running one alone', async () => {
    for (let i = 0; i < 3; i++) fake.addServer({ name: `vm-${i}`, host: 'compute-a', hang: true });
    const h = harness(fake, { nova: { maxConcurrentMigrations: 1 } });
    const ctx = cancelledOnceMigrating(h, { abortOnCancel: false });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(fake.count('POST', /\/action$/)).toBe(3);
    // the first holds Nova's slot (abortOnCancel false: left to finish); the two queued are aborted
    expect(fake.count('DELETE', /\/migrations\/\d+$/)).toBe(2);
    expect(outcome.workloads.map((w) => w.state).sort()).toEqual(['failed', 'failed', 'migrating']);
  });

  it('on a shutdown leaves every submitted migration to Nova, for the next agent to adopt', async () => {
    for (let i = 0; i < 3; i++) fake.addServer({ name: `vm-${i}`, host: 'compute-a', hang: true });
    const h = harness(fake, { nova: { maxConcurrentMigrations: 1 } });
    const ctx = evacuationContext(h, {
      abortOnCancel: true,
      onProgress: (items, controller) => {
        if (items.filter((i) => i.state === 'migrating').length === 3) controller.abort(new Error('SIGTERM'));
      },
    });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(fake.count('POST', /\/action$/)).toBe(3);
    // aborting the queued ones would make the next agent submit them a second time
    expect(fake.count('DELETE', /\/migrations\/\d+$/)).toBe(0);
    expect(outcome.workloads.map((w) => w.state)).toEqual(['migrating', 'migrating', 'migrating']);
  });
});

const isObjectWith = (v: unknown, key: string): boolean => typeof v === 'object' && v !== null && key in v;

/** Runs act once, as the first server action with this body key reaches Nova (before it answers); says whether it ran. */
function onceBefore(key: string, act: () => void): () => boolean {
  let done = false;
  fake.onRequest = (r) => {
    if (done || r.method !== 'POST' || !isObjectWith(r.body, key)) return;
    done = true;
    act();
  };
  return () => done;
}
