// Whose move is a server's running (or landed) migration: drainer's, or someone else's (its owner's
// resize, an operator's migration)? Asked when Nova answers 409 to drainer's move, and when a
// restarted agent finds a server its record moved. Nova's migration records say what kind of move it
// is (an owner's resize is `resize`, drainer never resizes); the server's action log says who asked
// for the newest one: the request id of drainer's answered call, or, when the answer was lost, a call
// of the same kind by drainer's user made no earlier than drainer's lost one.
import { isAuthError } from '../../errors.ts';
import type { Entry } from './entry.ts';
import type { Logger } from '../../observability/logger.ts';
import type { ComputeClient } from './compute.ts';
import type { NovaInstanceAction, NovaMigration } from './types.ts';

export type MoveKind = 'live-migrate' | 'cold-migrate';

/** The action log's name (nova/compute/instance_actions.py) and the record's type of each move. */
const ACTION: Record<MoveKind, string> = { 'live-migrate': 'live-migration', 'cold-migrate': 'migrate' };
const TYPE: Record<MoveKind, string> = { 'live-migrate': 'live-migration', 'cold-migrate': 'migration' };
const MOVES = new Set(['live-migration', 'migrate', 'resize']);
/** A lost call and its action log entry are stamped by two clocks (ours, Nova's): this much apart at most. */
const CLOCKS_APART_MS = 60_000;

/** What drainer knows of its own calls to move this server. */
export interface OwnCalls {
  /** Request ids of the move calls Nova answered. */
  requests: ReadonlySet<string>;
  /** A move call whose answer was lost, and when it was sent (our clock). */
  lost: { action: MoveKind; at: number } | undefined;
}

export const ownCalls = (e: Entry): OwnCalls => ({ requests: e.requests, lost: e.lostCall });

/**
 * 'ours' or 'theirs'. A read that fails leaves it to what drainer knows: with a call of its own whose
 * answer was lost, the move is taken for that call's (the one Nova most likely took); else someone else's.
 */
export async function whoseMove(
  o: {
    compute: Pick<ComputeClient, 'listMigrationsOf' | 'listInstanceActions' | 'userId'>;
    signal: AbortSignal;
    log: Logger;
  },
  serverId: string,
  action: MoveKind,
  own: OwnCalls,
): Promise<'ours' | 'theirs'> {
  const { compute, signal } = o;
  let read: [NovaMigration[], NovaInstanceAction[], string | undefined];
  try {
    read = await Promise.all([
      // the records only name the kind of move: without them, the action log's name does
      compute.listMigrationsOf(serverId, signal).catch((): NovaMigration[] => []),
      compute.listInstanceActions(serverId, signal),
      compute.userId(signal),
    ]);
  } catch (err) {
    if (signal.aborted || isAuthError(err)) throw err;
    o.log.warn(
      { err, server: serverId },
      "reading the server's action log failed: whose move it is goes by what drainer knows",
    );
    return own.lost?.action === action ? 'ours' : 'theirs';
  }
  const [records, actions, user] = read;
  const newest = records.reduce<NovaMigration | undefined>((a, r) => (!a || r.id > a.id ? r : a), undefined);
  // a resize is its owner's; another kind of move than drainer's is not drainer's
  if (newest?.migration_type && newest.migration_type !== TYPE[action]) return 'theirs';
  const asked = actions.find((a) => MOVES.has(a.action));
  if (!asked || asked.action !== ACTION[action]) return 'theirs';
  if (own.requests.has(asked.request_id)) return 'ours';
  const lost = own.lost;
  if (!lost || lost.action !== action) return 'theirs';
  if (user && asked.user_id && asked.user_id !== user) return 'theirs';
  const at = novaInstant(asked.start_time);
  return Number.isNaN(at) || at >= lost.at - CLOCKS_APART_MS ? 'ours' : 'theirs';
}

/** Nova writes its times in UTC, mostly without a zone ("2026-11-28T01:26:29.000000"). */
function novaInstant(t: string | undefined): number {
  if (!t) return NaN;
  return Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(t) ? t : `${t}Z`);
}
