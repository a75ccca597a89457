// Whose is a server's SHUTOFF: drainer's stop, or someone's power action since? Nova's action log
// (os-instance-actions) names each call by the request id its answer carried. The server is still
// drainer's to start while the newest power action in it is drainer's own (its stop, or a start of
// drainer's that did not take). A move (resize, migrate, live-migration) is no power action: Nova
// keeps a stopped server stopped through it (finish_resize powers on only what ran), so a server
// drainer stopped stays drainer's wherever its owner or another evacuation moved it.
import { isForbiddenError, isNotFoundError } from '../../errors.ts';
import type { ComputeClient } from './compute.ts';

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
  try {
    const newest = (await compute.listInstanceActions(id, signal)).find((a) => POWER.has(a.action));
    return newest ? ours.has(newest.request_id) : undefined;
  } catch (err) {
    if (isForbiddenError(err) || isNotFoundError(err)) return undefined;
    throw err;
  }
}
