// Takes off the cordon drainer made, and only that one (issue 48 item 6). The restore read the
// Node when the cordon was drainer's (`since`, that read's resourceVersion). A cordon lifted and put
// back after that read (an operator's `kubectl uncordon`, then `kubectl cordon`) is someone else's
// and stays. The API server tells which: a watch from `since` replays every change of the Node up to
// the version the decision is made on, and the uncordon is guarded by that version (a 409: someone
// wrote since, decide again from there). When the server no longer holds those changes (410: the
// restore took longer than its watch cache keeps), the cordon is taken for drainer's, as before, and
// the answer says so: kept, it would stay for good and start a new evacuation of the node.
import { ConflictError, isNotFoundError } from '../errors.ts';
import type { KubeClients } from './client.ts';
import { GUARD_ATTEMPTS } from './guarded.ts';
import { MERGE_PATCH } from './http.ts';
import { getNode } from './node.ts';
import type { KubeNode } from './types.ts';
import { watchStream } from './watch-stream.ts';

export type UncordonResult =
  /** `unsure`: whose cordon it was could not be told (the changes since were not readable). */
  | { readonly done: 'uncordoned'; readonly unsure?: string }
  /** Not cordoned (any more), or no such Node: nothing to take off. */
  | { readonly done: 'not-cordoned' }
  /** The cordon stays: `why` says whose it is, or why that cannot be told. */
  | { readonly done: 'kept'; readonly why: string };

/** How long the replay of the Node's changes may take before the cordon is kept as unknown. */
const REPLAY_SECONDS = 10;

/**
 * Uncordons the node if its cordon has stood since `since` (undefined: no earlier read is known,
 * the cordon is taken for drainer's as it is now).
 */
export async function uncordonOurs(
  k: KubeClients,
  name: string,
  since: string | undefined,
  signal?: AbortSignal,
): Promise<UncordonResult> {
  let from = since;
  let unsure: string | undefined;
  for (let attempt = 1; ; attempt++) {
    let node: KubeNode;
    try {
      node = await getNode(k, name, signal);
    } catch (err) {
      if (isNotFoundError(err)) return { done: 'not-cordoned' };
      throw err;
    }
    if (node.spec?.unschedulable !== true) return { done: 'not-cordoned' };
    const rv = node.metadata.resourceVersion;
    if (from !== undefined && rv !== from) {
      const seen = await liftedBetween(k, name, from, rv, signal);
      if (seen.lifted) return { done: 'kept', why: seen.lifted };
      unsure ??= seen.unsure;
    }
    try {
      await k.request({
        method: 'PATCH',
        path: `/api/v1/nodes/${encodeURIComponent(name)}`,
        contentType: MERGE_PATCH,
        // null removes the field, as `kubectl uncordon` leaves it
        body: { metadata: { resourceVersion: rv }, spec: { unschedulable: null } },
        ...(signal ? { signal } : {}),
      });
      return unsure ? { done: 'uncordoned', unsure } : { done: 'uncordoned' };
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= GUARD_ATTEMPTS) throw err;
      // written since the read: the cordon stood until `rv`, the replay starts there
      from = rv;
    }
  }
}

/**
 * Was the cordon lifted (or the Node deleted) after `from`, up to `to`? `lifted` says why it is no
 * longer drainer's; `unsure`, why that cannot be told; neither: it stood throughout.
 */
async function liftedBetween(
  k: KubeClients,
  name: string,
  from: string,
  to: string | undefined,
  signal?: AbortSignal,
): Promise<{ lifted?: string; unsure?: string }> {
  const stop = new AbortController();
  let lifted: string | undefined;
  let reached = false;
  const result = await watchStream({
    http: k,
    path: '/api/v1/nodes',
    query: { fieldSelector: `metadata.name=${name}` },
    resourceVersion: from,
    timeoutSeconds: REPLAY_SECONDS,
    watchdogMs: (REPLAY_SECONDS + 5) * 1000,
    signal: signal ? AbortSignal.any([signal, stop.signal]) : stop.signal,
    onEvent: (type, obj) => {
      const n = obj as KubeNode;
      if (type === 'DELETED') lifted ??= 'the Node was deleted and registered again since';
      else if (n.spec?.unschedulable !== true)
        lifted ??= 'uncordoned and cordoned again by someone else during the restore';
      if (n.metadata.resourceVersion === to) {
        reached = true;
        stop.abort();
      }
    },
  }).catch((err: unknown) => {
    if (stop.signal.aborted) return undefined;
    throw err;
  });
  if (lifted) return { lifted };
  if (reached) return {};
  return {
    unsure: result?.expired
      ? "the API server no longer holds the Node's changes since the restore began"
      : "the Node's changes since the restore began could not be read",
  };
}
