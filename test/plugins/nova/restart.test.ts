// Restore of way out stop: drainer starts again only the servers it stopped, and only while they are
// as it left them: SHUTOFF, idle, and drainer's stop still the newest power action in the server's
// action log, wherever it is now (without that log: on the host, or moved by drainer itself since);
// a stop still powering off is followed to its end first, and an entry leaves the record only once
// the server runs again or its owner took it over.
import { describe, expect, it } from 'vitest';
import type { PluginRecord, RestoreContext } from '../../../src/core/backends/plugin.ts';
import { ForbiddenError, NotFoundError } from '../../../src/errors.ts';
import type { NovaRecord } from '../../../src/plugins/nova/record.ts';
import { startStopped } from '../../../src/plugins/nova/restart.ts';
import type { NovaInstanceAction, NovaServer, NovaService } from '../../../src/plugins/nova/types.ts';
import { captureLogger, FakeClock } from './helpers.ts';

const server = (id: string, status: string, host = 'compute-a'): NovaServer => ({
  id,
  name: id,
  status,
  'OS-EXT-STS:task_state': null,
  'OS-EXT-SRV-ATTR:host': host,
});

/** An entry of a server's action log. */
const act = (action: string, request_id: string): NovaInstanceAction => ({ action, request_id });

/**
 * Nova as drainer reads it during restore: `script` gives a server's next looks one read at a
 * time (the last one stays); os-start of a SHUTOFF one makes it powering-on, then ACTIVE. `log`
 * is each server's action log, newest first (an os-start goes on top with its request id).
 */
function world(
  servers: Record<string, NovaServer | undefined>,
  script: Record<string, NovaServer[]> = {},
  log: Record<string, NovaInstanceAction[]> = {},
  inMaintenance: readonly string[] = [],
) {
  const started: string[] = [];
  // each server's metadata as drainer's writes left it (its mark)
  const meta: Record<string, Record<string, string>> = {};
  const metaOf = (id: string) => (meta[id] ??= { ...(servers[id]?.metadata ?? {}) });
  const compute = {
    setServerMetadataItem: async (id: string, key: string, value: string) => {
      metaOf(id)[key] = value;
    },
    deleteServerMetadataItem: async (id: string, key: string) => {
      delete metaOf(id)[key];
    },
    listInstanceActions: async (id: string) => log[id] ?? [],
    listServices: async (host: string): Promise<NovaService[]> => [
      {
        id: `svc-${host}`,
        host,
        binary: 'nova-compute',
        status: inMaintenance.includes(host) ? 'disabled' : 'enabled',
      },
    ],
    init: async () => ({ microversion: '2.90' }),
    getServer: async (id: string) => {
      const next = script[id];
      if (next && next.length > 1) servers[id] = next.shift();
      else if (next?.length === 1) servers[id] = next[0];
      const s = servers[id];
      if (!s) throw new NotFoundError(`server ${id} not found`, { api: 'nova', status: 404 });
      return { ...s, metadata: metaOf(id) };
    },
    startServer: async (id: string): Promise<string | undefined> => {
      started.push(id);
      script[id] = [busy(id, 'SHUTOFF', 'powering-on'), server(id, 'ACTIVE')];
      return logged(id, 'start');
    },
  };
  const logged = (id: string, action: string) => {
    const request = `req-drainer-${action}-${started.length}`;
    log[id] = [act(action, request), ...(log[id] ?? [])];
    return request;
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
  const opts = { node: 'node-a', sleep: clock.sleep, now: clock.now, pollMs: 1000 };
  return { compute, started, saved, ctx, opts, clock, logged, meta: metaOf };
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
  it('starts its own stopped servers, leaves one its owner started (and, with no action log to go by, one on another host), and forgets both', async () => {
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
      return w.logged(id, 'start'); // the log's newest is drainer's own start: still drainer's
    };
    w.logged('stuck', 'stop');

    await expect(
      startStopped(
        w.compute,
        rec({ stuck: { attempts: 0, startedAt: '', stopped: true, stopRequest: 'req-drainer-stop-0' } }),
        w.ctx,
        w.opts,
      ),
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

describe('whose stop it is: the server’s action log (by the stop’s request id), wherever the server is', () => {
  const stopped = (stopRequest: string) => ({ attempts: 0, startedAt: '', stopped: true, stopRequest });

  it('one its owner resized after drainer’s stop is still drainer’s: Nova kept it SHUTOFF on its new host, and drainer starts it there', async () => {
    // nova/compute/manager.py finish_resize powers on only a server that ran before the resize
    const w = world(
      { vm: server('vm', 'SHUTOFF', 'compute-b') },
      {},
      {
        vm: [act('confirmResize', 'req-owner-2'), act('resize', 'req-owner-1'), act('stop', 'req-d1')],
      },
    );

    const after = await startStopped(w.compute, rec({ vm: stopped('req-d1') }), w.ctx, w.opts);

    expect(w.started).toEqual(['vm']);
    expect(after.migrations.vm?.stopped).toBeUndefined();
  });

  it('one moved onto a host in maintenance itself (nova-compute disabled) is not started there', async () => {
    // an owner's resize scheduled before that host's maintenance began, landed after
    const log = {
      vm: [act('confirmResize', 'req-owner-2'), act('resize', 'req-owner-1'), act('stop', 'req-d1')],
    };
    const w = world({ vm: server('vm', 'SHUTOFF', 'compute-b') }, {}, log, ['compute-b']);

    const after = await startStopped(w.compute, rec({ vm: stopped('req-d1') }), w.ctx, w.opts);

    expect(w.started).toEqual([]);
    expect(after.migrations.vm?.stopped).toBeUndefined();
  });

  it('one its owner started and stopped again on the host is theirs: not started, forgotten', async () => {
    const w = world(
      { vm: server('vm', 'SHUTOFF') },
      {},
      {
        vm: [act('stop', 'req-owner-2'), act('start', 'req-owner-1'), act('stop', 'req-d1')],
      },
    );

    const after = await startStopped(w.compute, rec({ vm: stopped('req-d1') }), w.ctx, w.opts);

    expect(w.started).toEqual([]);
    expect(after.migrations.vm?.stopped).toBeUndefined();
  });

  it('without the right to read the log (policy 403) it goes by where the server is', async () => {
    const w = world({ home: server('home', 'SHUTOFF'), away: server('away', 'SHUTOFF', 'compute-b') });
    w.compute.listInstanceActions = async () => {
      throw new ForbiddenError('policy', { api: 'nova', status: 403 });
    };

    await startStopped(w.compute, rec({ home: stopped('req-1'), away: stopped('req-2') }), w.ctx, w.opts);

    expect(w.started).toEqual(['home']);
  });
});
