import { beforeEach, describe, expect, it } from 'vitest';
import type { RestoreContext } from '../../../src/core/backends/plugin.ts';
import { AuthError, ForbiddenError, RecordConflictError } from '../../../src/errors.ts';
import { FakeNova, PASSWORD } from './fake-nova.ts';
import { evacuationContext, harness, offlineNock, restoreContext } from './helpers.ts';

const node = { name: 'compute-a' };

let fake: FakeNova;
offlineNock();
beforeEach(() => {
  fake = new FakeNova();
  fake.install();
});

describe('nova plugin: evacuate', () => {
  it('disables the service with a reason, then live-migrates every server of every project', async () => {
    fake.addServer({ name: 'web', host: 'compute-a', tenant_id: 'project-admin' });
    fake.addServer({ name: 'db', host: 'compute-a', tenant_id: 'project-other' });
    fake.addServer({ name: 'elsewhere', host: 'compute-b' });
    const h = harness(fake);
    const ctx = evacuationContext(h, { trigger: 'NodeMaintenance/nm-1' });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(outcome.succeeded).toBe(true);
    expect(outcome.workloads.map((w) => [w.name, w.state, w.action, w.target, w.attempts])).toEqual([
      ['web', 'succeeded', 'live-migrate', 'compute-b', 1],
      ['db', 'succeeded', 'live-migrate', 'compute-b', 1],
    ]);
    const svc = fake.service('compute-a');
    expect(svc.status).toBe('disabled');
    expect(svc.disabled_reason).toMatch(/^drainer: NodeMaintenance\/nm-1 2030-01-01T00:00:00\.000Z$/);
    expect(ctx.saved[0]).toMatchObject({ host: 'compute-a', disabledByUs: true, microversion: '2.90' });
    expect(
      fake.requests
        .filter((r) => r.path.endsWith('/servers/detail'))
        .every((r) => r.query.get('all_tenants') === '1'),
    ).toBe(true);
    expect(ctx.progressSeen.length).toBeGreaterThan(0);
  });

  it('saves the record before disabling the service and before each migration call', async () => {
    fake.addServer({ name: 'web', host: 'compute-a' });
    const h = harness(fake);
    const order: string[] = [];
    const ctx = evacuationContext(h, {
      onSave: (r) => {
        order.push(`save:${Object.keys(r.migrations as object).length}:${String(r.disabledByUs)}`);
        order.push(`requests:${fake.requests.filter((q) => q.method !== 'GET').length}`);
      },
    });

    await h.plugin.evacuate(node, ctx);

    // first save: before any write to Nova; the migration entry: after the disable, before the migrate
    expect(order.slice(0, 2)).toEqual(['save:0:true', 'requests:1']); // the 1 write is Keystone's POST
    expect(order).toContain('save:1:true');
    const idx = order.indexOf('save:1:true');
    expect(order[idx + 1]).toBe('requests:2'); // token POST + service PUT; the migrate POST comes after
  });
});

describe('nova plugin: whose disable it is, when an evacuation and a forced restore cross', () => {
  it('a restore whose record a newer attempt took over enables nothing', async () => {
    // `drainer restore --force` of a node still cordoned: the agent's next attempt writes its record
    // while the restore has yet to enable the service; the restore's guarded write then fails
    const h = harness(fake);
    const ctx = evacuationContext(h);
    await h.plugin.evacuate(node, ctx);
    const takenOver: RestoreContext = {
      ...restoreContext(h, ctx.record),
      save: async () => {
        throw new RecordConflictError('the record of node compute-a was written by someone else');
      },
    };

    await expect(h.plugin.restore(node, takenOver)).rejects.toBeInstanceOf(RecordConflictError);

    expect(fake.service('compute-a').status).toBe('disabled');
  });

  it('a service enabled since the plan looked (a restore meanwhile) is disabled again before anything moves', async () => {
    const h = harness(fake);
    await h.plugin.evacuate(node, evacuationContext(h));
    await h.plugin.plan(node, new AbortController().signal);
    Object.assign(fake.service('compute-a'), { status: 'enabled', disabled_reason: null });

    await h.plugin.evacuate(node, evacuationContext(h));

    expect(fake.service('compute-a').status).toBe('disabled');
  });
});

describe('nova plugin: restore', () => {
  it('re-enables the service only if the reason is still ours', async () => {
    fake.addServer({ name: 'web', host: 'compute-a' });
    const h = harness(fake);
    const ctx = evacuationContext(h);
    await h.plugin.evacuate(node, ctx);

    await h.plugin.restore(node, restoreContext(h, ctx.record));

    expect(fake.service('compute-a')).toMatchObject({ status: 'enabled', disabled_reason: null });
  });

  it('leaves a service alone whose reason an operator changed', async () => {
    const h = harness(fake);
    const ctx = evacuationContext(h);
    await h.plugin.evacuate(node, ctx);
    fake.service('compute-a').disabled_reason = 'hardware ticket 4711';

    await h.plugin.restore(node, restoreContext(h, ctx.record));

    expect(fake.service('compute-a')).toMatchObject({
      status: 'disabled',
      disabled_reason: 'hardware ticket 4711',
    });
  });

  it('does not touch a service that someone else had disabled before us', async () => {
    Object.assign(fake.service('compute-a'), { status: 'disabled', disabled_reason: 'ops: broken DIMM' });
    fake.addServer({ name: 'web', host: 'compute-a' });
    const h = harness(fake);
    const ctx = evacuationContext(h);

    const outcome = await h.plugin.evacuate(node, ctx);
    await h.plugin.restore(node, restoreContext(h, ctx.record));

    expect(outcome.succeeded).toBe(true);
    expect(ctx.record).toMatchObject({ disabledByUs: false, reason: 'ops: broken DIMM' });
    expect(fake.service('compute-a')).toMatchObject({
      status: 'disabled',
      disabled_reason: 'ops: broken DIMM',
    });
    expect(fake.count('PUT', /os-services/)).toBe(0);
  });
});

describe('nova plugin: versions, credentials and secrets', () => {
  it('evacuates and restores through the legacy service endpoints at microversion 2.1', async () => {
    fake.maxMicroversion = '2.1';
    fake.addServer({ name: 'web', host: 'compute-a' });
    const h = harness(fake);
    const ctx = evacuationContext(h);

    const outcome = await h.plugin.evacuate(node, ctx);
    await h.plugin.restore(node, restoreContext(h, ctx.record));

    expect(outcome.succeeded).toBe(true);
    expect(ctx.record).toMatchObject({ microversion: '2.1', serviceId: 100 });
    expect(fake.requests.filter((r) => r.method === 'PUT').map((r) => r.path)).toEqual([
      '/v2.1/os-services/disable-log-reason',
      '/v2.1/os-services/enable',
    ]);
    const live = fake.requests.find((r) => r.path.endsWith('/action'));
    expect(live?.body).toEqual({
      'os-migrateLive': { host: null, block_migration: false, disk_over_commit: false },
    });
  });

  it('works with an application credential', async () => {
    fake.addServer({ name: 'web', host: 'compute-a' });
    const h = harness(fake, {
      openstack: {
        auth: {
          authUrl: 'http://keystone.test/v3',
          applicationCredentialId: 'app-cred-1',
          applicationCredentialSecret: 'pw-Sup3r-S3cret',
        },
      },
    });
    expect((await h.plugin.evacuate(node, evacuationContext(h))).succeeded).toBe(true);
  });

  it('re-authenticates when Nova stops accepting the token mid-evacuation', async () => {
    fake.addServer({ name: 'web', host: 'compute-a', ticks: 3 });
    const h = harness(fake);
    let revoked = false;
    const ctx = evacuationContext(h, {
      onProgress: (items) => {
        if (!revoked && items.some((i) => i.state === 'migrating')) {
          revoked = true;
          fake.revokeTokens();
        }
      },
    });

    const outcome = await h.plugin.evacuate(node, ctx);

    expect(outcome.succeeded).toBe(true);
    expect(fake.count('POST', /auth\/tokens/)).toBe(2);
  });

  it('fails with ForbiddenError naming admin rights when Nova answers 403', async () => {
    fake.fail('GET', /os-services$/, 403);
    const h = harness(fake);
    const err = await h.plugin.plan(node, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    expect((err as Error).message).toMatch(/admin rights needed/);
  });

  it('never writes the password or a token into a log line', async () => {
    fake.addServer({ name: 'web', host: 'compute-a', failAttempts: 1 });
    fake.fail('GET', /servers\/detail$/, 503, 1);
    const h = harness(fake, { nova: { retries: 1 } });
    const ctx = evacuationContext(h);
    await h.plugin.evacuate(node, ctx);
    await h.plugin.restore(node, restoreContext(h, ctx.record));
    // a failing login as well: its error is logged the way the host would log it
    const bad = harness(fake, {
      openstack: {
        auth: {
          authUrl: 'http://keystone.test/v3',
          username: 'admin',
          password: 'wrong-Pa55',
          projectName: 'admin',
        },
      },
    });
    const err = await bad.plugin.plan(node, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    bad.log.error({ err }, 'plan failed');

    const lines = [...h.lines, ...bad.lines].join('\n');
    expect(h.lines.length).toBeGreaterThan(3);
    expect(lines).not.toContain(PASSWORD);
    expect(lines).not.toContain('wrong-Pa55');
    expect(lines).not.toMatch(/tok-\d+-abcdef/);
  });
});
