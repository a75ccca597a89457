// Restore of way out stop: start again every server the record says drainer stopped. A stop (or
// start) still in flight is followed to its end first: Nova's os-stop leaves the server ACTIVE in
// task_state powering-off for up to shutdown_timeout (60 s by default), and an uncordon can come
// in that time. Then a server SHUTOFF and idle whose newest power action is still drainer's stop
// (its action log, by the stop's request id) is started wherever it is now (its owner's resize or
// another evacuation may have moved it: Nova keeps a stopped server stopped) and followed until it
// runs; one its owner started, stopped, shelved or deleted meanwhile is the owner's. Without the
// stop's request id (an older record, an answer lost) or the right to read the log, it goes by
// where the server is: on the host, or moved by this record. The entry stays in the record until
// one or the other is seen, so a restore cut short starts it on its next pass.
import type { RestoreContext } from '../../core/backends/plugin.ts';
import { ApiError, isAuthError, isConflictError, isNotFoundError } from '../../errors.ts';
import type { ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';
import type { MigrationRecord } from './migrator-options.ts';
import { toPluginRecord, type NovaRecord } from './record.ts';
import { powerStillOurs } from './stop-owner.ts';
import { hostOf, taskStateOf, type NovaServer } from './types.ts';

/**
 * How long one restore pass follows a server's task (its stop, then our start): past Nova's
 * shutdown_timeout and a start. Longer, the pass fails with the entry kept, and the next one
 * (the queue's backoff) looks again.
 */
export const FOLLOW_TASK_MS = 5 * 60_000;
/** os-start answered 202 yet the server is SHUTOFF again (its start failed): tried this often. */
const STARTS = 3;

export interface RestartOptions {
  sleep: Sleep;
  now: () => number;
  /** Between two reads of a server with a task in flight (nova.pollInterval). */
  pollMs: number;
}

type Compute = Pick<ComputeClient, 'getServer' | 'startServer' | 'listInstanceActions' | 'listServices'> & {
  init(signal?: AbortSignal): Promise<unknown>;
};

export async function startStopped(
  compute: Compute,
  rec: NovaRecord,
  ctx: RestoreContext,
  opts: RestartOptions,
): Promise<NovaRecord> {
  const ids = Object.entries(rec.migrations)
    .filter(([, m]) => m.stopped === true)
    .map(([id]) => id);
  if (!ids.length) return rec;
  await compute.init(ctx.signal);
  let migrations = rec.migrations;
  for (const id of ids) {
    const entry = rec.migrations[id];
    const done = await restartOne(compute, id, rec.host, entry, ctx, opts);
    if (done === 'kept') continue; // a dry run
    const { stopped: _done, ...rest } = migrations[id] ?? { attempts: 0, startedAt: '' };
    migrations = { ...migrations, [id]: rest };
    await ctx.save(toPluginRecord({ ...rec, migrations }));
  }
  return { ...rec, migrations };
}

/** 'done': running again (by us or its owner), or no longer ours to start; 'kept': a dry run. */
async function restartOne(
  compute: Compute,
  id: string,
  host: string,
  entry: MigrationRecord | undefined,
  ctx: RestoreContext,
  opts: RestartOptions,
): Promise<'done' | 'kept'> {
  const until = opts.now() + FOLLOW_TASK_MS;
  let starts = 0;
  // drainer's power actions on it: its stop, then the starts this pass makes
  const ours = new Set(entry?.stopRequest ? [entry.stopRequest] : []);
  for (;;) {
    let s: NovaServer;
    try {
      s = await compute.getServer(id, ctx.signal);
    } catch (err) {
      if (!isNotFoundError(err)) throw err; // tried again by the next restore pass
      ctx.log.info({ server: id }, 'stopped server deleted meanwhile (by its owner): nothing to start');
      return 'done';
    }
    const task = taskStateOf(s);
    if (task !== null) {
      // drainer's stop still powering off, or a start (ours or its owner's) on its way: wait for its end
      if (opts.now() >= until) {
        throw new ApiError(
          'API',
          `server ${s.name} (${id}) is still in task_state ${task} after ${FOLLOW_TASK_MS / 1000}s: ` +
            'started again on the next restore pass',
          { api: 'nova' },
        );
      }
      await opts.sleep(opts.pollMs, ctx.signal);
      continue;
    }
    const mine = s.status === 'SHUTOFF' ? await stillDrainers(compute, s, host, entry, ours, ctx) : false;
    if (mine && hostOf(s) !== host && !(await inService(compute, hostOf(s), ctx))) {
      // moved onto a host in maintenance itself (its nova-compute disabled): started there it would
      // run on a host being emptied; it stays stopped, and is drainer's no more
      ctx.log.info(
        { server: id, host: hostOf(s) },
        'stopped by drainer, now on a host that is not in service: left stopped',
      );
      return 'done';
    }
    if (!mine) {
      ctx.log.info(
        { server: id, status: s.status, host: hostOf(s) },
        starts
          ? 'server started again (drainer stopped it for the reboot)'
          : s.status === 'SHUTOFF'
            ? 'stopped again by someone else since drainer’s stop (its owner): theirs, nothing to start'
            : 'not stopped any more (its owner started or shelved it, or the stop never ran): nothing to start',
      );
      return 'done';
    }
    if (ctx.dryRun) {
      ctx.log.info({ server: id }, 'dry run: would start the server drainer stopped');
      return 'kept';
    }
    if (starts >= STARTS) {
      throw new ApiError(
        'API',
        `server ${s.name} (${id}) is still SHUTOFF after ${STARTS} os-start: started again on the next restore pass` +
          (s.fault?.message ? `; Nova: ${s.fault.message}` : ''),
        { api: 'nova' },
      );
    }
    try {
      const request = await compute.startServer(id, ctx.signal);
      if (request) ours.add(request);
      starts++;
      ctx.log.info({ server: id, name: s.name, host }, 'starting the server drainer stopped for the reboot');
    } catch (err) {
      if (ctx.signal.aborted || isAuthError(err) || !isConflictError(err)) throw err;
      // 409: a task began between the read and the call (its owner's): read it again
    }
  }
}

/**
 * A SHUTOFF server's stop is still drainer's: its action log says so (by request id), wherever it
 * is; without the stop's id or the log, it is on the host, or this record moved it after its stop
 * (its way out changed to a move).
 */
async function stillDrainers(
  compute: Compute,
  s: NovaServer,
  host: string,
  entry: MigrationRecord | undefined,
  ours: ReadonlySet<string>,
  ctx: RestoreContext,
): Promise<boolean> {
  const byLog = ours.size ? await powerStillOurs(compute, s.id, ours, ctx.signal) : undefined;
  return byLog ?? (hostOf(s) === host || (entry?.attempts ?? 0) > 0);
}

/** Is the host's nova-compute service enabled (the host takes servers: in service)? */
async function inService(
  compute: Compute,
  host: string | null | undefined,
  ctx: RestoreContext,
): Promise<boolean> {
  if (!host) return false;
  const services = await compute.listServices(host, ctx.signal);
  return services.some((svc) => svc.status === 'enabled');
}
