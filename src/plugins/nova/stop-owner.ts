// Whose is a server's SHUTOFF: drainer's stop, or someone's power action since? Nova's action log
// (os-instance-actions) names each call by the request id its answer carried. The server is still
// drainer's to start while the newest power action in it is drainer's own (its stop, or a start of
// drainer's that did not take). A move (resize, migrate, live-migration) is no power action: Nova
// keeps a stopped server stopped through it (finish_resize powers on only what ran), so a server
// drainer stopped stays drainer's wherever its owner or another evacuation moved it.
import { isForbiddenError, isNotFoundError } from '../../errors.ts';
import type { ComputeClient } from './compute.ts';
import type { StopMark } from './stop-mark.ts';
import type { NovaInstanceAction } from './types.ts';

/** nova/compute/instance_actions.py: the actions that change whether the guest runs. */
const POWER = new Set([
  'start',
  'stop',
  'reboot',
  'rebuild',
  'pause',
  'unpause',
  'suspend',
  'resume',
  'rescue',
  'unrescue',
  'shelve',
  'shelveOffload',
  'unshelve',
  'restore',
]);

/**
 * true: the newest power action is one of `ours` (request ids); false: someone's is newer;
 * undefined: the log does not say (no power action listed, or no right to read it: policy 403).
 */
export async function powerStillOurs(
  compute: Pick<ComputeClient, 'listInstanceActions'>,
  id: string,
  ours: ReadonlySet<string>,
  signal?: AbortSignal,
): Promise<boolean | undefined> {
  return stopStillOurs(compute, id, ours, undefined, signal);
}

/**
 * As powerStillOurs; without a request id of drainer's, by drainer's stop mark: `after` is the
 * newest action before drainer's stop ("" for none), so the SHUTOFF is still drainer's while its
 * stop is the one power action since. undefined also when `after` is no longer in the log.
 */
export async function stopStillOurs(
  compute: Pick<ComputeClient, 'listInstanceActions'>,
  id: string,
  ours: ReadonlySet<string>,
  after: string | undefined,
  signal?: AbortSignal,
): Promise<boolean | undefined> {
  if (!ours.size && after === undefined) return undefined;
  let log: NovaInstanceAction[];
  try {
    log = await compute.listInstanceActions(id, signal);
  } catch (err) {
    if (isForbiddenError(err) || isNotFoundError(err)) return undefined;
    throw err;
  }
  if (ours.size) {
    const newest = log.find((a) => POWER.has(a.action));
    return newest ? ours.has(newest.request_id) : undefined;
  }
  const anchor = after ? log.findIndex((a) => a.request_id === after) : log.length;
  if (anchor < 0) return undefined;
  const since = log.slice(0, anchor).filter((a) => POWER.has(a.action));
  return since.length === 1 && since[0]?.action === 'stop';
}

/**
 * A SHUTOFF that is no longer the caller's may still be drainer's: another maintenance's stop, whose
 * mark the server carries now (the agent of a node an operator restored by force while it stayed
 * cordoned evacuates again, and stops it again while the restore still follows its start). True
 * when the mark's own stop is the newest power action: by its request id, else as the one power
 * action since its anchor.
 */
export async function markedStopNewest(
  compute: Pick<ComputeClient, 'listInstanceActions'>,
  id: string,
  mark: Pick<StopMark, 'after' | 'request'>,
  signal?: AbortSignal,
): Promise<boolean> {
  const byRequest = new Set(mark.request ? [mark.request] : []);
  return (await stopStillOurs(compute, id, byRequest, mark.after, signal)) === true;
}
