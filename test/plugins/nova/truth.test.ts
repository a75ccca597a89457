// Issue 23, the Nova side: drainer never claims a server moved that it did not see move, reads
// time from Nova's own clock, never re-sends a migrate call in the dark, and carries Nova's own
// reason into the outcome.
import { beforeEach, describe, expect, it } from 'vitest';
import { AuthError } from '../../../src/errors.ts';
import { FakeNova } from './fake-nova.ts';
import { evacuationContext, harness, offlineNock, openstackConfig } from './helpers.ts';

const node = { name: 'compute-a' };
const signal = () => new AbortController().signal;

let fake: FakeNova;
offlineNock();
beforeEach(() => {
  fake = new FakeNova();
  fake.honourChangesSince = true; // these stories are about what the changes listing shows
  fake.install();
});

const migrationsOf = (id: string) => fake.migrations.filter((m) => m.serverId === id);

describe('moved means seen moved', () => {
  it('plans a blocker naming the admin rights when Nova hides the host attribute', async () => {
    fake.addServer({ name: 'web', host: 'compute-a' });
    fake.hideHost = true;
    const h = harness(fake);

    const plan = await h.plugin.plan(node, signal());

    expect(plan.blockers).toEqual([
      expect.objectContaining({
        kind: 'missing-rights',
        message: expect.stringMatching(/OS-EXT-SRV-ATTR:host.*admin role/),
      }),
    ]);
  });

  it('counts no server moved and starts no migration when the host attribute is hidden', async () => {
    fake.addServer({ name: 'web', host: 'compute-a' });
    fake.addServer({ name: 'db', host: 'compute-a' });
    fake.hideHost = true;
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.succeeded).toBe(false);
    expect(outcome.workloads.map((w) => w.state)).toEqual(['failed', 'failed']);
    expect(outcome.workloads[0]?.message).toMatch(/host unknown.*admin role/);
    expect(fake.count('POST', /\/action$/)).toBe(0);
  });

  it('never counts a server moved whose host turns hidden while it migrates', async () => {
    fake.addServer({ name: 'web', host: 'compute-a', ticks: 3 });
    const h = harness(fake);
    const ctx = evacuationContext(h, {
      onProgress: (items) => {
        if (items.some((i) => i.state === 'migrating')) fake.hideHost = true;
      },
    });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(outcome.workloads[0]).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/host unknown/),
    });
  });

  it('moves a server again that the final host listing shows back on the host', async () => {
    const s = fake.addServer({ name: 'web', host: 'compute-a' });
    const h = harness(fake);
    let forcedBack = false;
    const ctx = evacuationContext(h, {
      onProgress: (items) => {
        // someone puts it back after we counted it moved, before the final listing
        if (!forcedBack && items[0]?.state === 'succeeded') {
          forcedBack = true;
          fake.servers.get(s.id)!.host = 'compute-a';
        }
      },
    });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(forcedBack).toBe(true);
    expect(fake.servers.get(s.id)?.host).toBe('compute-b');
    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', attempts: 2 });
    expect(migrationsOf(s.id)).toHaveLength(2);
  });
});

describe("time from Nova's clock", () => {
  it('sees a finished migration within a poll or two although another server runs 10 minutes fast', async () => {
    fake.addServer({ name: 'fast-clock', host: 'compute-b', clockAheadMs: 10 * 60_000 });
    const s = fake.addServer({ name: 'web', host: 'compute-a', ticks: 2 });
    const h = harness(fake, { nova: { migrationTimeout: 600 } });
    const start = h.clock.t;

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', target: 'compute-b' });
    expect(migrationsOf(s.id)).toHaveLength(1);
    expect(h.clock.t - start).toBeLessThan(30_000);
  });

  it("starts the changes window at the host listing's Date, less the margin, and moves it by Date only", async () => {
    fake.addServer({ name: 'fast-clock', host: 'compute-b', clockAheadMs: 10 * 60_000 });
    fake.addServer({ name: 'web', host: 'compute-a', ticks: 3 });
    const h = harness(fake);
    const start = h.clock.t;

    await h.plugin.evacuate(node, evacuationContext(h));

    const windows = fake.requests
      .filter((r) => r.query.has('changes-since') && r.path.endsWith('/servers/detail'))
      .map((r) => Date.parse(r.query.get('changes-since')!));
    expect(windows[0]).toBe(start - 10_000);
    // never ahead of Nova's own clock, whatever the fast server's `updated` says
    for (const w of windows) expect(w).toBeLessThanOrEqual(h.clock.t);
  });

  it('confirms a long "migrating" server by reading it, so a missed change frees its slot before the deadline', async () => {
    const s = fake.addServer({ name: 'web', host: 'compute-a', ticks: 3 });
    fake.addServer({ name: 'next', host: 'compute-a', ticks: 2 });
    // drainer sees it MIGRATING once; every change after that is missed by the changes listing
    let listingsSinceStart = 0;
    fake.onRequest = (r) => {
      if (r.method === 'POST' && r.path.endsWith(`${s.id}/action`)) listingsSinceStart = 0;
      else if (r.query.has('changes-since') && ++listingsSinceStart === 2) fake.missedByChanges.add(s.id);
    };
    const h = harness(fake, { nova: { migrationTimeout: 600, maxConcurrentMigrations: 1, submitAhead: 0 } });
    const start = h.clock.t;

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads.map((w) => [w.state, w.message])).toEqual([
      ['succeeded', undefined],
      ['succeeded', undefined],
    ]);
    expect(h.clock.t - start).toBeLessThan(200_000);
    expect(fake.count('GET', new RegExp(`/servers/${s.id}$`))).toBeGreaterThan(0);
  });
});

describe('a migrate call is never re-sent in the dark', () => {
  it('starts no second migration when Nova applied os-migrateLive but the answer was dropped', async () => {
    const s = fake.addServer({ name: 'web', host: 'compute-a', ticks: 1 });
    fake.dropAnswer('POST', /\/action$/, 1, true); // applied, finished within the backoff, answer lost
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(migrationsOf(s.id)).toHaveLength(1);
    expect(fake.count('POST', /\/action$/)).toBe(1);
    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', target: 'compute-b', attempts: 1 });
  });

  it('follows a migration still running after its answer was dropped', async () => {
    const s = fake.addServer({ name: 'web', host: 'compute-a', ticks: 3 });
    fake.dropAnswer('POST', /\/action$/, 1);
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(migrationsOf(s.id)).toHaveLength(1);
    expect(outcome.workloads[0]).toMatchObject({ state: 'succeeded', attempts: 1 });
  });
});

describe("Nova's own reason", () => {
  it('carries the fault message and the migration status into the outcome', async () => {
    fake.addServer({
      name: 'web',
      host: 'compute-a',
      failAttempts: 1,
      faultOnFailure: 'No valid host was found. There are not enough hosts available.',
    });
    const h = harness(fake);

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/Nova: No valid host was found.*\(migration 1 error\)/),
    });
  });

  it('says the migration status of a failed attempt', async () => {
    fake.addServer({ name: 'web', host: 'compute-a', failAttempts: 9 });
    const h = harness(fake, { nova: { retries: 0 } });

    const outcome = await h.plugin.evacuate(node, evacuationContext(h));

    expect(outcome.workloads[0]?.message).toMatch(/still on compute-a \(migration 1 error\)/);
  });
});

describe('cloud authentication check', () => {
  it('signs in once and then reuses the token: at most one request per check', async () => {
    const h = harness(fake);

    await h.plugin.checkAuth?.(signal());
    await h.plugin.checkAuth?.(signal());

    expect(fake.count('POST', /\/auth\/tokens$/)).toBe(1);
    expect(fake.requests).toHaveLength(1);
  });

  it('throws an AuthError when Keystone rejects the password', async () => {
    const auth = { ...openstackConfig().auth, password: 'wrong' };
    const h = harness(fake, { openstack: { auth } });

    const err = await h.plugin.checkAuth?.(signal()).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(AuthError);
    expect(fake.count('POST', /\/auth\/tokens$/)).toBe(1);
  });
});
