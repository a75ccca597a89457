// Restore of way out stop: drainer starts again only the servers it stopped, and only while they are
// as it left them (SHUTOFF, idle, on the host); what it did is taken out of the record.
import { describe, expect, it } from 'vitest';
import type { PluginRecord, RestoreContext } from '../../../src/core/backends/plugin.ts';
import { NotFoundError } from '../../../src/errors.ts';
import type { NovaRecord } from '../../../src/plugins/nova/record.ts';
import { startStopped } from '../../../src/plugins/nova/restart.ts';
import type { NovaServer } from '../../../src/plugins/nova/types.ts';
import { captureLogger } from './helpers.ts';

const server = (id: string, status: string, host = 'compute-a'): NovaServer => ({
  id,
  name: id,
  status,
  'OS-EXT-STS:task_state': null,
  'OS-EXT-SRV-ATTR:host': host,
});

function world(servers: Record<string, NovaServer | undefined>) {
  const started: string[] = [];
  const compute = {
    init: async () => ({ microversion: '2.90' }),
    getServer: async (id: string) => {
      const s = servers[id];
      if (!s) throw new NotFoundError(`server ${id} not found`, { api: 'nova', status: 404 });
      return s;
    },
    startServer: async (id: string) => {
      started.push(id);
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
  return { compute, started, saved, ctx };
}

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

    const after = await startStopped(w.compute, record, w.ctx);

    expect(w.started).toEqual(['ours']);
    expect(Object.values(after.migrations).some((m) => m.stopped)).toBe(false);
    expect(w.saved.at(-1)).toMatchObject({ migrations: { ours: { attempts: 0 } } });
  });

  it('a server deleted meanwhile is forgotten too; a dry run starts nothing', async () => {
    const gone = world({});
    const after = await startStopped(
      gone.compute,
      rec({ x: { attempts: 0, startedAt: '', stopped: true } }),
      gone.ctx,
    );
    expect(after.migrations.x?.stopped).toBeUndefined();

    const dry = world({ ours: server('ours', 'SHUTOFF') });
    await startStopped(dry.compute, rec({ ours: { attempts: 0, startedAt: '', stopped: true } }), {
      ...dry.ctx,
      dryRun: true,
    });
    expect(dry.started).toEqual([]);
  });
});
