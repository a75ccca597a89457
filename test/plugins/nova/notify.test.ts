// Way out notify: the owner is asked first; drainer moves the server the default way only after
// nova.notifyTimeout, on a clock kept in the record so a restarted agent does not ask again from zero.
import { beforeEach, describe, expect, it } from 'vitest';
import { MAINTENANCE_KEY } from '../../../src/plugins/nova/policy.ts';
import { FakeNova } from './fake-nova.ts';
import { evacuationContext, harness, offlineNock } from './helpers.ts';

const node = { name: 'compute-a' };
let fake: FakeNova;
offlineNock();
beforeEach(() => {
  fake = new FakeNova();
  fake.install();
});

describe('way out notify', () => {
  it('waits nova.notifyTimeout for the owner, then live-migrates it', async () => {
    const s = fake.addServer({ name: 'ask', host: 'compute-a', metadata: { [MAINTENANCE_KEY]: 'notify' } });
    const h = harness(fake, { nova: { notifyTimeout: 600 } });
    const t0 = h.clock.t;

    const ctx = evacuationContext(h);
    const outcome = await h.plugin.evacuate(node, ctx);

    const asked = ctx.progressSeen.flat().filter((w) => w.action === 'notify' && w.state === 'pending');
    expect(asked[0]?.message).toMatch(/its owner is asked to move it .*the default way \(live\) in 600s/);
    const started = fake.migrations.find((m) => m.serverId === s.id);
    expect(started?.type).toBe('live-migration');
    expect((started?.createdAt ?? 0) - t0).toBeGreaterThanOrEqual(600_000);
    expect(outcome.succeeded).toBe(true);
    const entry = (ctx.record?.migrations as Record<string, { notifiedAt?: string }>)[s.id];
    expect(entry?.notifiedAt).toBe(new Date(t0).toISOString());
  });

  it('a resumed evacuation keeps the clock: an owner asked long enough ago is not asked again', async () => {
    const s = fake.addServer({ name: 'ask', host: 'compute-a', metadata: { [MAINTENANCE_KEY]: 'notify' } });
    const h = harness(fake, { nova: { notifyTimeout: 600 } });
    const record = {
      host: 'compute-a',
      serviceId: 'svc-uuid-compute-a',
      disabledByUs: true,
      reason: 'drainer: cordon 2030-01-01T00:00:00.000Z',
      microversion: '2.90',
      migrations: {
        [s.id]: { attempts: 0, startedAt: '', notifiedAt: new Date(h.clock.t - 3_600_000).toISOString() },
      },
    };
    Object.assign(fake.service('compute-a'), { status: 'disabled', disabled_reason: record.reason });
    const t0 = h.clock.t;

    const ctx = evacuationContext(h, { record });
    const outcome = await h.plugin.evacuate(node, ctx);

    expect(ctx.progressSeen.flat().some((w) => w.action === 'notify')).toBe(false);
    expect((fake.migrations.find((m) => m.serverId === s.id)?.createdAt ?? Infinity) - t0).toBeLessThan(
      60_000,
    );
    expect(outcome.succeeded).toBe(true);
  });

  it('an owner who moves it in time: counted moved, drainer starts nothing', async () => {
    const s = fake.addServer({ name: 'ask', host: 'compute-a', metadata: { [MAINTENANCE_KEY]: 'notify' } });
    const h = harness(fake, { nova: { notifyTimeout: 600 } });
    let moved = false;

    const ctx = evacuationContext(h, {
      onProgress: (items) => {
        if (!moved && items.some((w) => w.action === 'notify')) {
          moved = true;
          Object.assign(s, { host: 'compute-b' }); // the owner's own migration
        }
      },
    });
    const outcome = await h.plugin.evacuate(node, ctx);

    expect(outcome.workloads[0]).toMatchObject({
      state: 'succeeded',
      message: 'moved off the host by someone else',
    });
    expect(fake.migrations.filter((m) => m.serverId === s.id)).toEqual([]);
  });
});
