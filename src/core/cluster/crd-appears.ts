// Waits for a CustomResourceDefinition installed after the agent started (medik8s NMO, KubeVirt, …
// are installed after drainer as often as before it). One watch of that CRD by name (a field
// selector, so a ClusterRole can name it) sees it the moment it is established, at one request per
// watch timeout while it is absent; an agent whose role cannot read CRDs (an older install) looks
// for the resource itself again every `fallbackMs`, as it did before.
import type { KubeClients } from '../../kube/client.ts';
import { sleep } from '../../kube/backoff.ts';
import { runWatch } from '../../kube/watch.ts';
import type { KubeObject } from '../../kube/types.ts';
import { isForbiddenError, isNotFoundError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';

export const CRDS_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** A CRD watched while absent is re-opened this often (seconds): cheaper than a periodic list. */
const CRD_WATCH_TIMEOUT_S = 1800;

export interface CrdWaitOptions {
  readonly k: KubeClients;
  readonly log: Logger;
  /** `nodemaintenances.nodemaintenance.medik8s.io` */
  readonly crd: string;
  /** Is the resource served now? (a list of it: true, its 404: false; other errors throw) */
  readonly served: (signal: AbortSignal) => Promise<boolean>;
  /** Without the right to read CRDs: how often `served` is asked again. */
  readonly fallbackMs: number;
  /** Between the CRD's Established condition and the resource being served (default 1 s). */
  readonly settleMs?: number;
  readonly timeoutSeconds?: number;
  readonly signal: AbortSignal;
}

const established = (crd: KubeObject): boolean =>
  ((crd as { status?: { conditions?: { type?: string; status?: string }[] } }).status?.conditions ?? []).some(
    (c) => c.type === 'Established' && c.status === 'True',
  );

/** Resolves true once the resource is served, false when the signal aborted. */
export async function waitForCrd(o: CrdWaitOptions): Promise<boolean> {
  const readable = await canReadCrd(o);
  if (readable === undefined) return false;
  if (readable) {
    const seen = await watchUntilEstablished(o);
    if (!seen) return false;
  }
  // the CRD was seen established (or cannot be read): ask the resource itself until it is served.
  // Without the watch the caller has just found it absent, so the first look waits.
  const every = readable ? (o.settleMs ?? 1000) : o.fallbackMs;
  for (let first = true; !o.signal.aborted; first = false) {
    if (!readable || !first) await sleep(every, o.signal).catch(() => undefined);
    if (o.signal.aborted) break;
    try {
      if (await o.served(o.signal)) return true;
    } catch {
      // API trouble: look again later
    }
  }
  return false;
}

/** true: the CRD can be watched; false: no right to (403); undefined: aborted. */
async function canReadCrd(o: CrdWaitOptions): Promise<boolean | undefined> {
  for (let failures = 1; !o.signal.aborted; failures++) {
    try {
      await o.k.request({ path: `${CRDS_PATH}/${encodeURIComponent(o.crd)}`, signal: o.signal });
      return true; // there already: the watch's first event says so
    } catch (err) {
      if (isNotFoundError(err)) return true;
      if (isForbiddenError(err)) {
        o.log.info(
          { crd: o.crd },
          'cannot read CustomResourceDefinitions (an older ClusterRole): looking for the resource again periodically',
        );
        return false;
      }
      await sleep(Math.min(30_000, 1000 * 2 ** failures), o.signal).catch(() => undefined);
    }
  }
  return undefined;
}

async function watchUntilEstablished(o: CrdWaitOptions): Promise<boolean> {
  const done = new AbortController();
  const stop = () => done.abort();
  o.signal.addEventListener('abort', stop, { once: true });
  let seen = false;
  try {
    await runWatch({
      k: o.k,
      log: o.log,
      path: CRDS_PATH,
      query: { fieldSelector: `metadata.name=${o.crd}` },
      watchFirst: true,
      timeoutSeconds: o.timeoutSeconds ?? CRD_WATCH_TIMEOUT_S,
      signal: done.signal,
      onEvent: (type, crd) => {
        if (type === 'DELETED' || !established(crd)) return;
        seen = true;
        done.abort();
      },
    });
  } finally {
    o.signal.removeEventListener('abort', stop);
  }
  return seen && !o.signal.aborted;
}
