// Restore of way out stop: drainer starts again only the servers it stopped, and only while they are
// as it left them (SHUTOFF, idle, on the host, or moved by drainer itself since); a stop still powering off is followed to its end
// first, and an entry leaves the record only once the server runs again or its owner took it over.
import { describe, expect, it } from 'vitest';
import type { PluginRecord, RestoreContext } from '../../../src/core/backends/plugin.ts';
import { NotFoundError } from '../../../src/errors.ts';
import type { NovaRecord } from '../../../src/plugins/nova/record.ts';
import { startStopped } from '../../../src/plugins/nova/restart.ts';
import type { NovaServer } from '../../../src/plugins/nova/types.ts';
import { captureLogger, FakeClock } from './helpers.ts';

const server = (id: string, status: string, host = 'compute-a'): NovaServer => ({
  id,
  name: id,
  status,
  'OS-EXT-STS:task_state': null,
  'OS-EXT-SRV-ATTR:host': host,
});

/**
 * Nova as drainer reads it during restore: `script` gives a server's next looks one read at a
 * time (the last one stays); os-start of a SHUTOFF one makes it powering-on, then ACTIVE.
 */
function world(servers: Record<string, NovaServer | undefined>, script: Record<string, NovaServer[]> = {}) {
  const started: string[] = [];
  const compute = {
    init: async () => ({ microversion: '2.90' }),
    getServer: async (id: string) => {
      const next = script[id];
      if (next && next.length > 1) servers[id] = next.shift();
      else if (next?.length === 1) servers[id] = next[0];
      const s = servers[id];
      if (!s) throw new NotFoundError(`server ${id} not found`, { api: 'nova', status: 404 });
      return s;
    },
    startServer: async (id: string) => {
      started.push(id);
      script[id] = [busy(id, 'SHUTOFF', 'powering-on'), server(id, 'ACTIVE')];
    },
  };
  const saved: PluginRecord[] = [];
  const ctx: RestoreContext = {
    log: captureLogger().log,
    signal: new AbortController().signal,
    dryRun: false,
    record: undefined,
    save: async (r) => {
      saved.push(r);
    },
  };
  const clock = new FakeClock();
  const opts = { sleep: clock.sleep, now: clock.now, pollMs: 1000 };
  return { compute, started, saved, ctx, opts, clock };
}

const busy = (id: string, status: string, task: string): NovaServer => ({
  ...server(id, status),
  'OS-EXT-STS:task_state': task,
});

const rec = (migrations: NovaRecord['migrations']): NovaRecord => ({
  host: 'compute-a',
  serviceId: 's1',
  disabledByUs: true,
  reason: 'drainer: cordon',
  microversion: '2.90',
  migrations,
});

describe('starting again what drainer stopped', () => {
  it('starts its own stopped servers, leaves one its owner started or moved, and forgets both', async () => {
    const w = world({
      ours: server('ours', 'SHUTOFF'),
      restarted: server('restarted', 'ACTIVE'),
      moved: server('moved', 'SHUTOFF', 'compute-b'),
      notOurs: server('notOurs', 'SHUTOFF'),
    });
    const record = rec({
      ours: { attempts: 0, startedAt: '', stopped: true },
      restarted: { attempts: 0, startedAt: '', stopped: true },
      moved: { attempts: 0, startedAt: '', stopped: true },
      notOurs: { attempts: 1, startedAt: '2030-01-01T00:00:00Z' },
    });

    const after = await startStopped(w.compute, record, w.ctx, w.opts);

    expect(w.started).toEqual(['ours']);
    expect(Object.values(after.migrations).some((m) => m.stopped)).toBe(false);
    expect(w.saved.at(-1)).toMatchObject({ migrations: { ours: { attempts: 0 } } });
  });

  it('starts one drainer stopped and then migrated itself (its way out changed to cold): still SHUTOFF on another host', async () => {
    const w = world({ ours: server('ours', 'SHUTOFF', 'compute-c') });
    const after = await startStopped(
      w.compute,
      rec({ ours: { attempts: 1, startedAt: '2030-01-01T00:00:00Z', migrationId: 7, stopped: true } }),
      w.ctx,
      w.opts,
    );
    expect(w.started).toEqual(['ours']);
    expect(after.migrations.ours?.stopped).toBeUndefined();
  });

  it('a server deleted meanwhile is forgotten too; a dry run starts nothing', async () => {
    const gone = world({});
    const after = await startStopped(
      gone.compute,
      rec({ x: { attempts: 0, startedAt: '', stopped: true } }),
      gone.ctx,
      gone.opts,
    );
    expect(after.migrations.x?.stopped).toBeUndefined();

    const dry = world({ ours: server('ours', 'SHUTOFF') });
    await startStopped(
      dry.compute,
      rec({ ours: { attempts: 0, startedAt: '', stopped: true } }),
      {
        ...dry.ctx,
        dryRun: true,
      },
      dry.opts,
    );
    expect(dry.started).toEqual([]);
  });

  it('an uncordon during drainer’s own stop: the stop is followed to its end, then the server started and followed until it runs', async () => {
    // Nova's os-stop: ACTIVE in task_state powering-off until the guest is off (up to 60 s)
    const w = world(
      {},
      {
        stopping: [
          busy('stopping', 'ACTIVE', 'powering-off'),
          busy('stopping', 'ACTIVE', 'powering-off'),
          server('stopping', 'SHUTOFF'),
        ],
      },
    );
    const t0 = w.clock.t;

    const after = await startStopped(
      w.compute,
      rec({ stopping: { attempts: 0, startedAt: '', stopped: true } }),
      w.ctx,
      w.opts,
    );

    expect(w.started).toEqual(['stopping']);
    expect(w.clock.t - t0).toBeGreaterThanOrEqual(2000); // waited for the stop, not given up at once
    expect(after.migrations.stopping?.stopped).toBeUndefined();
  });

  it('a stop that never ends within the pass keeps the entry: the next restore pass starts it', async () => {
    const w = world({ hung: busy('hung', 'ACTIVE', 'powering-off') });

    await expect(
      startStopped(w.compute, rec({ hung: { attempts: 0, startedAt: '', stopped: true } }), w.ctx, w.opts),
    ).rejects.toThrow(/hung \(hung\) is still in task_state powering-off .*next restore pass/);

    expect(w.started).toEqual([]);
    expect(w.saved).toEqual([]);
  });

  it('a start that Nova answers but does not carry out is tried again, and the entry kept if it never runs', async () => {
    const w = world({ stuck: server('stuck', 'SHUTOFF') });
    w.compute.startServer = async (id: string) => {
      w.started.push(id); // 202, yet the server stays SHUTOFF (its start failed on the host)
    };

    await expect(
      startStopped(w.compute, rec({ stuck: { attempts: 0, startedAt: '', stopped: true } }), w.ctx, w.opts),
    ).rejects.toThrow(/still SHUTOFF after 3 os-start/);

    expect(w.started).toEqual(['stuck', 'stuck', 'stuck']);
    expect(w.saved).toEqual([]);
  });

  it('one its owner shelved meanwhile (offloaded: no host) is the owner’s: not started, forgotten', async () => {
    const w = world({ shelved: { ...server('shelved', 'SHELVED_OFFLOADED'), 'OS-EXT-SRV-ATTR:host': null } });

    const after = await startStopped(
      w.compute,
      rec({ shelved: { attempts: 0, startedAt: '', stopped: true } }),
      w.ctx,
      w.opts,
    );

    expect(w.started).toEqual([]);
    expect(after.migrations.shelved?.stopped).toBeUndefined();
  });
});
