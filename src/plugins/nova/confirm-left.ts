// Restore confirms the resizes drainer asked for and no run of the migrator saw land: a cold
// migration an uncordon left moving (the cancel follows it only briefly: the host abandons a plugin
// that does not stop soon after its signal), or one that landed while no agent ran. Each server the
// record cold-migrated is read: waiting in VERIFY_RESIZE after drainer's own call (whose.ts), it is
// confirmed; still moving, it is followed until it lands, within nova.migrationTimeout.
import { isApiError, isAuthError, isConflictError, isNotFoundError, isTransientError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import { isNotResized, type ComputeClient } from './compute.ts';
import type { Sleep } from './http.ts';
import type { MigrationRecord } from './migrator-options.ts';
import { taskStateOf, type NovaMigration } from './types.ts';
import { whoseMove } from './whose.ts';

type Compute = Pick<
  ComputeClient,
  'getServer' | 'confirmResize' | 'listMigrationsOf' | 'listInstanceActions' | 'userId'
>;

export interface ConfirmLeftOptions {
  sleep: Sleep;
  now: () => number;
  /** Between two reads of a server still moving (nova.pollInterval). */
  pollMs: number;
  /** How long a move still running is followed (nova.migrationTimeout). */
  waitMs: number;
  /** The record's compute host: only a move out of it is this restore's to confirm. */
  host: string;
  /**
   * Ends the following sooner (the stop of an agent no successor follows: its time is the stop's),
   * with the same word on each move left; `ended` says why ("until nova.migrationTimeout" by default).
   */
  endsWith?: { signal: AbortSignal; ended: string };
}

interface Ctx {
  log: Logger;
  signal: AbortSignal;
  dryRun?: boolean;
}

/**
 * Is the server's newest move one out of `host`? A server drainer moved away may be moved on by the
 * next host's agent (same user, later call): that resize is the other agent's to confirm, and both
 * confirming it ends in Nova's 400 "Instance has not been resized" for the later one. Unknown
 * (the records unreadable): taken for this host's, as before.
 */
async function fromHost(compute: Compute, id: string, host: string, signal: AbortSignal): Promise<boolean> {
  const all = await compute.listMigrationsOf(id, signal).catch((): NovaMigration[] => []);
  const newest = all.reduce<NovaMigration | undefined>((n, m) => (!n || m.id > n.id ? m : n), undefined);
  return !newest?.source_compute || newest.source_compute === host;
}

export async function confirmLeft(
  compute: Compute,
  migrations: Readonly<Record<string, MigrationRecord>>,
  ctx: Ctx,
  opts: ConfirmLeftOptions,
): Promise<void> {
  const until = opts.now() + opts.waitMs;
  let left = Object.keys(migrations).filter(
    (id) => migrations[id]?.move === 'cold-migrate' && !migrations[id]?.stopped,
  );
  const ours = new Set<string>(); // asked once: whose a move is does not change while it runs
  const lost = new Set<string>(); // the last look failed (a confirm's answer lost, a 5xx)
  for (;;) {
    const moving: string[] = [];
    for (const id of left) {
      const again = lost.has(id);
      const seen = await look(compute, id, migrations[id]!, ours, { ...ctx, host: opts.host, again });
      if (seen === 'done') continue;
      moving.push(id);
      if (seen === 'lost') lost.add(id);
      else lost.delete(id);
    }
    left = moving;
    if (left.length === 0 || ctx.dryRun) return;
    const ends = opts.endsWith?.signal;
    if (opts.now() >= until || ends?.aborted) break;
    try {
      await opts.sleep(opts.pollMs, ends ? AbortSignal.any([ctx.signal, ends]) : ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted || !ends?.aborted) throw err;
    }
  }
  const ended = opts.endsWith?.ended ?? 'until nova.migrationTimeout';
  for (const id of left)
    ctx.log.warn(
      { server: id },
      lost.has(id)
        ? `drainer's cold migration landed, but Nova kept failing its confirm ${ended}: confirm its resize (openstack server resize confirm ${id})`
        : `drainer's cold migration still ran ${ended}: confirm its resize once it lands (openstack server resize confirm ${id})`,
    );
}

async function look(
  compute: Compute,
  id: string,
  r: MigrationRecord,
  ours: Set<string>,
  ctx: Ctx & { host: string; again: boolean },
): Promise<'moving' | 'lost' | 'done'> {
  const { log, signal } = ctx;
  try {
    const s = await compute.getServer(id, signal);
    const landed = s.status === 'VERIFY_RESIZE' && taskStateOf(s) === null;
    if (!landed && taskStateOf(s) === null) return 'done'; // confirmed, reverted, or never moved
    if (!ours.has(id)) {
      if (!(await fromHost(compute, id, ctx.host, signal))) return 'done';
      const at = Date.parse(r.startedAt);
      // the record keeps no request id: the call counts as one whose answer this run never saw
      const own = {
        requests: new Set<string>(),
        lost: Number.isNaN(at) ? undefined : { action: 'cold-migrate' as const, at },
      };
      if ((await whoseMove({ compute, signal, log }, id, 'cold-migrate', own)) !== 'ours') return 'done';
      ours.add(id);
    }
    if (!landed) return 'moving';
    if (ctx.dryRun) {
      log.info({ server: id }, "dry run: would confirm the resize of drainer's cold migration");
      return 'done';
    }
    await compute.confirmResize(id, signal);
    log.info(
      { server: id },
      "resize confirmed (drainer's cold migration, landed after its evacuation ended)",
    );
  } catch (err) {
    if (signal.aborted || isAuthError(err)) throw err;
    if (isTransientError(err)) {
      // the answer lost (it may have been applied) or Nova busy: read back at the next look, and
      // still waiting in VERIFY_RESIZE it is confirmed again (one that took answers that 400, below)
      log.warn({ err, server: id }, "reading or confirming drainer's resize failed; looking again");
      return 'lost';
    }
    // deleted, or confirmed by someone first (400 while that confirm runs, 409 once it is done, or
    // reverted: its state changed since this read; or by the lost confirm, Nova still showing it
    // waiting): nothing left to confirm; else said, for the operator
    if (ctx.again && isApiError(err) && err.status === 400)
      log.info({ server: id }, 'resize already confirmed (the confirm whose answer was lost took)');
    else if (isNotResized(err) || isConflictError(err))
      log.info(
        { server: id, status: err.status },
        'resize already confirmed or reverted by another (the agent of the host it landed on, or its owner)',
      );
    else if (!isNotFoundError(err)) log.warn({ err, server: id }, "confirming drainer's resize failed");
  }
  return 'done';
}
