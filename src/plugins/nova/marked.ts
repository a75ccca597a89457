// The servers on a host that carry drainer's stop mark (stop-mark.ts), whoever's record stopped
// them: the restore of the host, or the stranded check of its Node registered again with no record,
// starts each one whose SHUTOFF is still drainer's, and takes the mark off those their owners took
// over. The mark is the memory of the stop that outlives the Node, its record and the agent.
import { isAuthError } from '../../errors.ts';
import { restartOne, type Compute, type Restarted, type RestartOptions } from './restart.ts';
import type { ComputeClient } from './compute.ts';
import { stopMarkOf } from './stop-mark.ts';
import type { NovaServer } from './types.ts';
import type { Logger } from '../../observability/logger.ts';

export interface MarkedCtx {
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly dryRun: boolean;
}

export interface MarkedResult {
  readonly server: Pick<NovaServer, 'id' | 'name'>;
  readonly result: Restarted;
  /** The mark's node and trigger: which maintenance stopped it. */
  readonly stoppedBy: string;
}

/** Starts the marked servers on `host` (but those in `skip`: a record's own, already seen to). */
export async function startMarked(
  compute: Compute & Pick<ComputeClient, 'listServersOnHost'>,
  host: string,
  skip: ReadonlySet<string>,
  ctx: MarkedCtx,
  opts: RestartOptions,
): Promise<MarkedResult[]> {
  const marked = (await compute.listServersOnHost(host, ctx.signal)).filter(
    (s) => stopMarkOf(s) && !skip.has(s.id),
  );
  const out: MarkedResult[] = [];
  for (const s of marked) {
    const mark = stopMarkOf(s)!;
    // the mark claims it: without the action log to say otherwise, it is drainer's to start
    const result = await restartRetried(compute, s, host, ctx, opts);
    out.push({ server: { id: s.id, name: s.name }, result, stoppedBy: `${mark.node} (${mark.trigger})` });
  }
  return out;
}

/** A failed start is tried again after these waits, doubling from the first (a poll at least): a minute or more in all. */
const RETRIES = 5;
const FIRST_RETRY_MS = 2000;

/**
 * restartOne of a marked server (the mark claims it), a failure said at warn with Nova's reason and
 * tried again with a backoff (Nova refusing while the host's nova-compute comes up, a lost answer),
 * until it runs, went elsewhere or its owner took it over. The last failure is thrown: the caller's
 * next pass tries again.
 */
export async function restartRetried(
  compute: Compute,
  s: Pick<NovaServer, 'id' | 'name'>,
  host: string,
  ctx: MarkedCtx,
  opts: RestartOptions,
): Promise<Restarted> {
  for (let retry = 0; ; retry++) {
    try {
      return await restartOne(compute, s.id, host, { fallback: () => true }, ctx, opts);
    } catch (err) {
      if (ctx.signal.aborted || isAuthError(err)) throw err;
      const last = retry >= RETRIES;
      const backoffMs = Math.max(FIRST_RETRY_MS, opts.pollMs) * 2 ** retry;
      ctx.log.warn(
        { server: s.id, name: s.name, reason: (err as Error).message, ...(last ? {} : { backoffMs }) },
        last
          ? 'starting the server drainer stopped failed; the next pass tries again'
          : 'starting the server drainer stopped failed; trying again',
      );
      if (last) throw err;
      await opts.sleep(backoffMs, ctx.signal);
    }
  }
}
