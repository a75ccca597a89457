// Restore of way out stop: start again every server the record says drainer stopped, if it is still
// SHUTOFF on the host and idle (an owner who started it, moved it or deleted it meanwhile wins).
import type { RestoreContext } from '../../core/backends/plugin.ts';
import { isAuthError, isNotFoundError } from '../../errors.ts';
import type { ComputeClient } from './compute.ts';
import { toPluginRecord, type NovaRecord } from './record.ts';
import { hostOf, taskStateOf } from './types.ts';

export async function startStopped(
  compute: Pick<ComputeClient, 'getServer' | 'startServer'> & {
    init(signal?: AbortSignal): Promise<unknown>;
  },
  rec: NovaRecord,
  ctx: RestoreContext,
): Promise<NovaRecord> {
  const ids = Object.entries(rec.migrations)
    .filter(([, m]) => m.stopped === true)
    .map(([id]) => id);
  if (!ids.length) return rec;
  await compute.init(ctx.signal);
  let migrations = rec.migrations;
  for (const id of ids) {
    try {
      const s = await compute.getServer(id, ctx.signal);
      const ours = s.status === 'SHUTOFF' && taskStateOf(s) === null && hostOf(s) === rec.host;
      if (!ours) {
        ctx.log.info(
          { server: id, status: s.status, host: hostOf(s) },
          'stopped server left alone: no longer as drainer left it',
        );
      } else if (ctx.dryRun) {
        ctx.log.info({ server: id }, 'dry run: would start the server drainer stopped');
        continue;
      } else {
        await compute.startServer(id, ctx.signal);
        ctx.log.info(
          { server: id, name: s.name, host: rec.host },
          'server started again (drainer stopped it for the reboot)',
        );
      }
    } catch (err) {
      if (ctx.signal.aborted || isAuthError(err)) throw err;
      if (!isNotFoundError(err)) throw err; // tried again by the next restore pass
    }
    const { stopped: _done, ...rest } = migrations[id] ?? { attempts: 0, startedAt: '' };
    migrations = { ...migrations, [id]: rest };
    await ctx.save(toPluginRecord({ ...rec, migrations }));
  }
  return { ...rec, migrations };
}
