// The compute client an evacuation's migrator gets: the same, but every os-stop it makes is marked
// on the server first (stop-mark.ts), so the migrator itself knows nothing of marks. A stop Nova
// refuses takes its mark back (it did nothing); a stop whose answer was lost keeps it. Once the
// evacuation's run is over, each stop's own request id goes into its mark (Nova refuses metadata
// writes while the server powers off, so not at once), and the marks of refused stops that could
// not be taken off at once come off then too.
import { isConflictError, isNotFoundError, isOutcomeUnknownError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { ComputeClient } from './compute.ts';
import type { MigrationRecord } from './migrator-options.ts';
import { overriding } from './override.ts';
import {
  formatStopMark,
  newestAction,
  setStopMark,
  STOP_MARK_KEY,
  stopMarkOf,
  type StopMark,
} from './stop-mark.ts';
import { taskStateOf, type NovaServer } from './types.ts';

type Compute = Pick<
  ComputeClient,
  | 'stopServer'
  | 'setServerMetadataItem'
  | 'deleteServerMetadataItem'
  | 'listInstanceActions'
  | 'getServer'
  | 'listServersOnHost'
  | 'listServersChangedSince'
>;

export interface MarkingStops<C> {
  /** `compute`, with its stopServer marking first. */
  readonly compute: C;
  /**
   * The server carried drainer's mark when the migrator last read it: a move of it is a move of a
   * server drainer stopped (another maintenance's, its record maybe gone), so this record claims it
   * and its restore starts it wherever it lands.
   */
  marked(id: string): boolean;
  /** Writes each stop's request id into its mark (best effort: the mark's anchor stands in for it). */
  stamp(signal?: AbortSignal): Promise<void>;
  /**
   * A resumed record's stops made by an older drainer, which set no mark: each gets one now, named
   * by the record's request id of its stop (without that id nothing could tell its stop from its
   * owner's later, so only the record keeps it).
   */
  adopt(migrations: Readonly<Record<string, MigrationRecord>>, signal?: AbortSignal): Promise<void>;
}

export function markingStops<C extends Compute>(
  compute: C,
  maintenance: Pick<StopMark, 'node' | 'trigger'>,
  log: Logger,
): MarkingStops<C> {
  const made = new Map<string, StopMark>();
  /** Marks of stops Nova refused, still to take off (a refusal is mostly an owner's task under way, which refuses that too). */
  const refused = new Set<string>();
  const unmark = async (id: string): Promise<void> => {
    try {
      await compute.deleteServerMetadataItem(id, STOP_MARK_KEY);
      refused.delete(id);
    } catch (e) {
      log.info({ server: id, reason: (e as Error).message }, 'stop mark of a refused os-stop left for now');
    }
  };
  const stopServer = async (id: string, signal?: AbortSignal): Promise<string | undefined> => {
    const mark: StopMark = { ...maintenance, after: await newestAction(compute, id, signal) };
    await setStopMark(compute, id, mark, signal);
    let request: string | undefined;
    try {
      request = await compute.stopServer(id, signal);
    } catch (err) {
      // refused, the stop did nothing: no claim (a lost answer keeps it: the stop may have run)
      if (!signal?.aborted && !isOutcomeUnknownError(err)) {
        refused.add(id);
        await unmark(id);
      }
      throw err;
    }
    refused.delete(id);
    if (request) made.set(id, { ...mark, request });
    return request;
  };
  const marks = new Set<string>();
  const seen = <T extends NovaServer[]>(servers: T): T => {
    for (const x of servers) {
      if (stopMarkOf(x)) marks.add(x.id);
      else marks.delete(x.id);
    }
    return servers;
  };
  // the migrator's reads of servers, watched for marks (no request of their own)
  const reads: Partial<Record<PropertyKey, unknown>> = {
    stopServer,
    listServersOnHost: async (host: string, signal?: AbortSignal, onNovaNow?: (ms: number) => void) =>
      seen(await compute.listServersOnHost(host, signal, onNovaNow)),
    listServersChangedSince: async (since: Date, signal?: AbortSignal) => {
      const r = await compute.listServersChangedSince(since, signal);
      seen(r.servers);
      return r;
    },
    getServer: async (id: string, signal?: AbortSignal) => seen([await compute.getServer(id, signal)])[0],
  };
  const wrapped = overriding(compute, reads);
  return {
    compute: wrapped,
    marked: (id) => marks.has(id),
    async adopt(migrations, signal) {
      for (const [id, m] of Object.entries(migrations)) {
        if (!m.stopped || !m.stopRequest) continue;
        const s = await compute.getServer(id, signal).catch((err: unknown) => {
          if (isNotFoundError(err)) return undefined;
          throw err;
        });
        if (!s || stopMarkOf(s) || s.status !== 'SHUTOFF' || taskStateOf(s) !== null) continue;
        await setStopMark(compute, id, { ...maintenance, request: m.stopRequest }, signal).catch(
          (err: unknown) => {
            if (signal?.aborted || !isConflictError(err)) throw err; // busy: the next pass marks it
          },
        );
        log.info({ server: id }, 'server stopped by an older drainer: marked now');
      }
    },
    async stamp(signal) {
      // not cut short by a cancel: a refused stop's mark would claim the owner's stop as drainer's
      for (const id of [...refused]) await unmark(id);
      // an evacuation cut short (uncordon, shutdown) returns at once: the mark's anchor stands in
      if (signal?.aborted) return;
      for (const [id, mark] of made) {
        try {
          await compute.setServerMetadataItem(id, STOP_MARK_KEY, formatStopMark(mark), signal);
          made.delete(id);
        } catch (err) {
          if (signal?.aborted) return;
          log.debug(
            { server: id, reason: (err as Error).message },
            'stop mark not stamped with its request id',
          );
        }
      }
    },
  };
}
