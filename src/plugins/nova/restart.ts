// Restore of way out stop: start again every server the record says drainer stopped. A stop (or
// start) still in flight is followed to its end first: Nova's os-stop leaves the server ACTIVE in
// task_state powering-off for up to shutdown_timeout (60 s by default), and an uncordon can come
// in that time. Then a server SHUTOFF and idle whose newest power action is still drainer's stop
// (its action log, by the stop's request id, or the first power action after the anchor of
// drainer's mark, stop-mark.ts) is started wherever it is now (its owner's resize or another
// evacuation may have moved it: Nova keeps a stopped server stopped) and followed until it runs;
// one its owner started, stopped, shelved or deleted meanwhile is the owner's, and either way the
// mark comes off; one drainer stopped again since for another maintenance keeps that stop's mark,
// that maintenance's to start (a forced restore raced by the agent's next evacuation). One its owner
// resized, waiting for their confirm (VERIFY_RESIZE: Nova keeps it off), keeps its mark and stays
// stopped: the agent of the host it ends on starts it (stranded.ts), since the confirm may take the
// owner hours. One now on a host in maintenance keeps its mark and stays stopped: that host's
// restore starts it (marked.ts); so does one on this node while it is still to be evacuated (a
// forced restore before the uncordon: a drain may run). Without the log, the caller's claim decides (the record: on the
// host, or moved by this record). The entry stays in the record until one or the other is seen,
// so a restore cut short starts it on its next pass.
import type { RestoreContext } from '../../core/backends/plugin.ts';
import { ApiError, isAuthError, isConflictError, isNotFoundError } from '../../errors.ts';
import type { ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';
import { toPluginRecord, type NovaRecord } from './record.ts';
import { removeStopMark, setStopMark, stopMarkOf, type StopMark } from './stop-mark.ts';
import { markedStopNewest, stopStillOurs } from './stop-owner.ts';
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
  /** The node restored: named in the mark of a server an older drainer stopped without one. */
  node: string;
  sleep: Sleep;
  now: () => number;
  /** Between two reads of a server with a task in flight (nova.pollInterval). */
  pollMs: number;
  /**
   * The restored node is still to be evacuated (a forced restore before the uncordon, a drain may
   * run): a server on its own host is left stopped, marked, like one on another host in maintenance.
   */
  hostInMaintenance?: boolean;
}

export type Compute = Pick<
  ComputeClient,
  | 'getServer'
  | 'startServer'
  | 'listInstanceActions'
  | 'listServices'
  | 'setServerMetadataItem'
  | 'deleteServerMetadataItem'
> & {
  init(signal?: AbortSignal): Promise<unknown>;
};

/** What a restart needs of its caller (a restore, or the stranded check of a Node with no record). */
type Ctx = Pick<RestoreContext, 'log' | 'signal' | 'dryRun'>;

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
    // without the action log, the record vouches for one on the host or moved by this record
    const claim: Claim = {
      ...(entry?.stopRequest ? { request: entry.stopRequest } : {}),
      fallback: (s) => hostOf(s) === rec.host || (entry?.attempts ?? 0) > 0,
    };
    const done = await restartOne(compute, id, rec.host, claim, ctx, opts);
    if (done === 'kept') continue; // a dry run
    const { stopped: _done, ...rest } = migrations[id] ?? { attempts: 0, startedAt: '' };
    migrations = { ...migrations, [id]: rest };
    await ctx.save(toPluginRecord({ ...rec, migrations }));
  }
  return { ...rec, migrations };
}

/** What says a server's SHUTOFF is drainer's: a request id of its stop, else the mark's `after`, else `fallback`. */
export interface Claim {
  readonly request?: string;
  readonly fallback: (s: NovaServer) => boolean;
}

/**
 * 'started': running again by drainer; 'theirs': running or stopped by its owner, deleted, or the
 * stop never ran; 'elsewhere': on a host in maintenance, where it stays stopped with its mark (that
 * host's restore starts it); 'resizing': its owner's resize waits for their confirm, and it stays
 * stopped with its mark (the agent of the host it ends on starts it); 'kept': a dry run. The mark
 * goes with 'started' and 'theirs'.
 */
export type Restarted = 'started' | 'theirs' | 'elsewhere' | 'resizing' | 'kept';

export async function restartOne(
  compute: Compute,
  id: string,
  host: string,
  claim: Claim,
  ctx: Ctx,
  opts: RestartOptions,
): Promise<Restarted> {
  const until = opts.now() + FOLLOW_TASK_MS;
  let starts = 0;
  let refused = 0;
  // drainer's power actions on it: its stop, then the starts this pass makes
  const ours = new Set<string>();
  for (;;) {
    const s = await readServer(compute, id, ctx);
    if (!s) return 'theirs';
    const mark = stopMarkOf(s);
    const request = claim.request ?? mark?.request;
    if (request) ours.add(request);
    if (inFlight(s)) {
      await waitForTask(s, until, ctx, opts);
      continue;
    }
    // at VERIFY_RESIZE its owner's resize waits for their confirm or revert, for as long as they
    // take (hours): still off, and not followed, or a restore would hold its node that long
    const resizing = s.status === 'VERIFY_RESIZE';
    const off = s.status === 'SHUTOFF' || resizing;
    if (!(off && (await stillDrainers(compute, s, claim, mark, ours, ctx))))
      return endClaim(compute, s, mark, ours, starts, ctx);
    const here = hostOf(s) === host;
    if (resizing || (here ? opts.hostInMaintenance === true : !(await inService(compute, hostOf(s), ctx)))) {
      // resizing, or on a host in maintenance (moved onto one, its nova-compute disabled; or this
      // node, still cordoned): started there it would run on a host being emptied, maybe drained
      // right now. It stays stopped with drainer's mark: the agent of the host it ends on starts it
      if (!ctx.dryRun) await keepMark(compute, s, mark, request, opts, ctx);
      ctx.log.info({ server: id, host: hostOf(s) }, leftStopped(resizing, here));
      return resizing ? 'resizing' : 'elsewhere';
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
      const started = await compute.startServer(id, ctx.signal);
      if (started) ours.add(started);
      starts++;
      ctx.log.info({ server: id, name: s.name, host }, 'starting the server drainer stopped for the reboot');
    } catch (err) {
      if (ctx.signal.aborted || isAuthError(err) || !isConflictError(err)) throw err;
      // 409: a task began between the read and the call (its owner's), or Nova refuses while the
      // host's nova-compute is not up: read it again after a poll, a few times (the caller retries)
      if (++refused >= STARTS)
        throw new ApiError(
          'API',
          `os-start of server ${s.name} (${id}) refused ${refused} times: ${err.message}`,
          {
            api: 'nova',
          },
        );
      await opts.sleep(opts.pollMs, ctx.signal);
    }
  }
}

/** The server now, or undefined once it is deleted (its owner's). */
async function readServer(compute: Compute, id: string, ctx: Ctx): Promise<NovaServer | undefined> {
  try {
    return await compute.getServer(id, ctx.signal);
  } catch (err) {
    if (!isNotFoundError(err)) throw err; // tried again by the next restore pass
    ctx.log.info({ server: id }, 'stopped server deleted meanwhile (by its owner): nothing to start');
    return undefined;
  }
}

/** drainer's stop still powering off, or a start (ours or its owner's) on its way. */
const inFlight = (s: NovaServer): boolean => taskStateOf(s) !== null;

/** Why a server drainer stopped is left stopped, with its mark, by this pass. */
const leftStopped = (resizing: boolean, here: boolean): string =>
  resizing
    ? "stopped by drainer, now at VERIFY_RESIZE (its owner's resize waits for their confirm): left stopped with drainer's mark; the agent of the host it ends on starts it"
    : here
      ? 'stopped by drainer on a node still in maintenance: left stopped, the restore after its uncordon starts it'
      : 'stopped by drainer, now on a host that is not in service: left stopped, its restore starts it';

/** One poll's wait for a task to end; past FOLLOW_TASK_MS the pass fails (the next one looks again). */
async function waitForTask(s: NovaServer, until: number, ctx: Ctx, opts: RestartOptions): Promise<void> {
  if (opts.now() >= until) {
    throw new ApiError(
      'API',
      `server ${s.name} (${s.id}) is still in task_state ${taskStateOf(s)} after ${FOLLOW_TASK_MS / 1000}s: ` +
        'started again on the next restore pass',
      { api: 'nova' },
    );
  }
  await opts.sleep(opts.pollMs, ctx.signal);
}

/**
 * The SHUTOFF (or the run) is not this claim's: the owner's, and the mark comes off; or drainer's
 * stop for another maintenance since, whose mark stays for that one to start: the mark names the
 * newest power action, or is anchored on one of ours (written after it, its os-stop still to come).
 */
async function endClaim(
  compute: Compute,
  s: NovaServer,
  mark: StopMark | undefined,
  ours: ReadonlySet<string>,
  starts: number,
  ctx: Ctx,
): Promise<Restarted> {
  const another =
    !!mark &&
    ((mark.after !== undefined && ours.has(mark.after)) ||
      (s.status === 'SHUTOFF' && (await markedStopNewest(compute, s.id, mark, ctx.signal))));
  const said = !another ? notMine(s, starts) : s.status === 'SHUTOFF' ? STOPPED_AGAIN : STOP_COMING;
  ctx.log.info({ server: s.id, status: s.status, host: hostOf(s) }, said);
  if (!another && !ctx.dryRun) await removeStopMark(compute, s, ctx.log, ctx.signal);
  // stopped again for another maintenance: this start did not last, that one's to start it
  if (another && s.status === 'SHUTOFF') return 'theirs';
  return starts ? 'started' : 'theirs';
}

const STOPPED_AGAIN =
  'stopped again by drainer since, for another maintenance (its mark names that stop): left stopped with that mark, for that maintenance to start';
const STOP_COMING =
  'server started again; drainer marked it since for another maintenance’s stop: that mark stays';

const notMine = (s: NovaServer, starts: number): string =>
  starts
    ? 'server started again (drainer stopped it for the reboot)'
    : s.status === 'SHUTOFF'
      ? 'stopped again by someone else since drainer’s stop (its owner): theirs, nothing to start'
      : s.status === 'VERIFY_RESIZE'
        ? 'its owner changed its power since drainer’s stop, then resized it: theirs, nothing to start'
        : 'not stopped any more (its owner started or shelved it, or the stop never ran): nothing to start';

/**
 * A SHUTOFF server's stop is still drainer's: its action log says so (by request id, else after the
 * mark's anchor), wherever it is; without the log, the claim's fallback decides.
 */
async function stillDrainers(
  compute: Compute,
  s: NovaServer,
  claim: Claim,
  mark: StopMark | undefined,
  ours: ReadonlySet<string>,
  ctx: Ctx,
): Promise<boolean> {
  const byLog = await stopStillOurs(compute, s.id, ours, mark?.after, ctx.signal);
  return byLog ?? claim.fallback(s);
}

/** A server left stopped elsewhere carries the mark (one stopped by an older drainer gets it now). */
async function keepMark(
  compute: Compute,
  s: NovaServer,
  mark: StopMark | undefined,
  request: string | undefined,
  opts: RestartOptions,
  ctx: Ctx,
): Promise<void> {
  if (mark && (mark.request || !request)) return;
  const next = {
    node: mark?.node ?? opts.node,
    trigger: mark?.trigger ?? 'restore',
    ...(request ? { request } : {}),
  };
  try {
    await setStopMark(compute, s.id, next, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted || !isConflictError(err)) throw err;
    throw new ApiError('API', `server ${s.name} (${s.id}) is busy: marked on the next restore pass`, {
      api: 'nova',
    });
  }
}

/** Is the host's nova-compute service enabled (the host takes servers: in service)? */
async function inService(compute: Compute, host: string | null | undefined, ctx: Ctx): Promise<boolean> {
  if (!host) return false;
  const services = await compute.listServices(host, ctx.signal);
  return services.some((svc) => svc.status === 'enabled');
}
