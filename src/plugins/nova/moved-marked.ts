// A server carrying drainer's stop mark that an evacuation moved off its host (cold: it is off).
// Nothing else would start it where it lands: the host it lands on looks for marks only at its own
// restore or at the stranded check of its Node (once per Node), both maybe long past, and the
// record that claimed it (plugin.ts beforeStart) is lost with a Node deleted and registered again.
// So the move's end decides at once, by restartOne's rules: started on a host in service, left
// stopped with its mark on a host in maintenance (whose restore starts it, marked.ts), the mark
// taken off when its owner took it over. Run beside the migrator, which keeps polling meanwhile.
import type { Logger } from '../../observability/logger.ts';
import type { NovaRecord } from './record.ts';
import { restartRetried } from './marked.ts';
import type { Compute, Restarted, RestartOptions } from './restart.ts';
import { stopMarkOf } from './stop-mark.ts';
import type { NovaServer } from './types.ts';

export interface MovedMarked {
  /** A server the evacuation saw settle off the host (as last read). */
  landed(s: NovaServer): void;
  /** Waits for the restarts under way; answers the servers that need no claim any more (started, or theirs). */
  settle(): Promise<string[]>;
}

export function restartOnLanding(
  compute: Compute,
  source: string,
  ctx: { readonly log: Logger; readonly signal: AbortSignal; readonly dryRun: boolean },
  opts: RestartOptions,
): MovedMarked {
  const running: Promise<string | undefined>[] = [];
  const restart = async (s: NovaServer): Promise<string | undefined> => {
    let result: Restarted;
    try {
      result = await restartRetried(compute, s, source, ctx, opts);
    } catch {
      return undefined; // said; the claim stays in the record: its restore starts it wherever it is
    }
    return result === 'started' || result === 'theirs' ? s.id : undefined;
  };
  return {
    landed(s) {
      if (stopMarkOf(s)) running.push(restart(s));
    },
    async settle() {
      const done = await Promise.all(running.splice(0));
      return done.filter((id) => id !== undefined);
    },
  };
}

/** The record no longer claims the servers settled at their landing: its restore has nothing to start. */
export async function dropClaims(
  ids: readonly string[],
  current: () => NovaRecord,
  save: (r: NovaRecord) => Promise<void>,
): Promise<void> {
  const rec = current();
  const claimed = ids.filter((id) => rec.migrations[id]?.stopped);
  if (!claimed.length) return;
  const migrations = { ...rec.migrations };
  for (const id of claimed) {
    const { stopped: _claim, stopRequest: _request, ...rest } = migrations[id]!;
    migrations[id] = rest;
  }
  await save({ ...rec, migrations });
}
