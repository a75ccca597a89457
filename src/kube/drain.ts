// Pod drain with kubectl-drain semantics: list the node's pods (chunked), filter them in kubectl's
// order, evict through policy/v1 with bounded concurrency, and confirm each deletion by watch.
// The whole drain has one deadline (drain.timeout); pods still there then are reported as failed.
import type { DrainConfig } from '../config/schema.ts';
import { CancelledError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { KubeClients } from './client.ts';
import { evictPod } from './drain-evict.ts';
import { classifyPod } from './drain-filters.ts';
import { PdbWaiter } from './drain-pdb-wait.ts';
import { DeletionTracker } from './drain-tracker.ts';
import type { EventSink } from './events.ts';
import { limiter } from './limiter.ts';
import { podKey, podRef, type KubePod, type ObjectRef, type PodRef } from './types.ts';
import { listAll, runWatch } from './watch.ts';

export interface DrainResult {
  readonly succeeded: boolean;
  /** Pods that left the node (evicted by us, or already terminating and now gone). */
  readonly evicted: PodRef[];
  readonly ignored: { pod: PodRef; reason: string }[];
  readonly failed: { pod: PodRef; reason: string }[];
  /** Pods the drain had to remove. */
  readonly total: number;
  /** kubectl's warnings ("deleting Pods with local storage" …) for pods that were evicted anyway. */
  readonly warnings: { pod: PodRef; reason: string }[];
}

export interface DrainProgress {
  readonly total: number;
  readonly evicted: number;
  readonly pending: readonly PodRef[];
}

export interface DrainOptions {
  readonly node: string;
  readonly config: DrainConfig;
  /** Pods a plugin handles (e.g. virt-launcher pods): return the reason to leave them alone. */
  readonly skipPod?: (pod: KubePod) => string | undefined;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Receives EvictionBlocked Events (on the pod and on each `involved` object). */
  readonly events?: EventSink;
  /** More objects the EvictionBlocked Events go to (the Node, the NodeMaintenance). */
  readonly involved?: readonly ObjectRef[];
  readonly onProgress?: (p: DrainProgress) => void;
  /** Each eviction answer code (or "error"): drainer_evictions_total{code}. */
  readonly onEviction?: (code: string) => void;
}

interface Work {
  readonly pod: KubePod;
  readonly ref: PodRef;
  readonly evict: boolean;
  lastReason?: string;
}

const podObjectRef = (ref: PodRef): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Pod',
  name: ref.name,
  namespace: ref.namespace,
  ...(ref.uid ? { uid: ref.uid } : {}),
});

export async function drainNode(k: KubeClients, o: DrainOptions): Promise<DrainResult> {
  const c = o.config;
  const deadline = AbortSignal.any([o.signal, AbortSignal.timeout(Math.max(1, c.timeout * 1000))]);
  const query = { fieldSelector: `spec.nodeName=${o.node}`, labelSelector: c.podSelector || undefined };
  const path = '/api/v1/pods';
  const listed = await listAll<KubePod>(k, { path, query, signal: o.signal });

  const result: DrainResult = {
    succeeded: false,
    evicted: [],
    ignored: [],
    failed: [],
    total: 0,
    warnings: [],
  };
  const work: Work[] = [];
  for (const pod of listed.items) {
    const ref = podRef(pod);
    const d = await classifyPod(pod, { k, config: c, skipPod: o.skipPod, signal: o.signal });
    if (d.action === 'ignore') result.ignored.push({ pod: ref, reason: d.reason });
    else if (d.action === 'error') result.failed.push({ pod: ref, reason: d.reason });
    else {
      if (d.action === 'evict' && d.warning) result.warnings.push({ pod: ref, reason: d.warning });
      work.push({ pod, ref, evict: d.action === 'evict' });
    }
  }
  const total = work.length;
  if (result.failed.length) {
    o.log.warn(
      { failed: result.failed.map((f) => `${podKey(f.pod)}: ${f.reason}`) },
      'drain refused: nothing evicted',
    );
    return { ...result, total };
  }
  for (const w of result.warnings) o.log.warn({ pod: podKey(w.pod) }, w.reason);

  const tracker = new DeletionTracker();
  tracker.follow(work.map((w) => w.ref));
  const stopWatch = new AbortController();
  const watching = runWatch<KubePod>({
    k,
    path,
    query,
    startAt: { resourceVersion: listed.resourceVersion, objects: listed.items },
    onEvent: (type, pod) => tracker.observe(type, pod),
    onSynced: (pods) => tracker.synced(pods),
    signal: AbortSignal.any([deadline, stopWatch.signal]),
    log: o.log,
    timeoutSeconds: Math.max(1, Math.ceil(c.timeout)),
    backoff: { initialMs: 200, maxMs: 5000 },
  });

  const pending = new Map(work.map((w) => [podKey(w.ref), w.ref]));
  const progress = (): void =>
    o.onProgress?.({ total, evicted: result.evicted.length, pending: [...pending.values()] });
  progress();
  const limit = limiter(c.concurrency);
  const involved = o.involved ?? [];
  // one shared watch of budgets, so blocked pods retry as soon as a disruption is allowed
  const budgets = new PdbWaiter({ k, log: o.log, signal: deadline });

  const one = async (w: Work): Promise<void> => {
    if (w.evict) {
      const r = await evictPod(w.pod, w.ref, {
        k,
        gracePeriodSeconds: c.gracePeriodSeconds,
        retryIntervalMs: c.evictionRetryInterval * 1000,
        signal: deadline,
        limit,
        budgets,
        onAnswer: o.onEviction,
        onBlocked: (ref, message) => {
          w.lastReason = message;
          o.log.info({ pod: podKey(ref) }, message);
          for (const target of [podObjectRef(ref), ...involved]) {
            void o.events?.record(target, 'Warning', 'EvictionBlocked', message);
          }
        },
      });
      if (r.kind === 'failed') {
        pending.delete(podKey(w.ref));
        result.failed.push({ pod: w.ref, reason: r.reason });
        progress();
        return;
      }
      w.lastReason = r.kind === 'gone' ? undefined : 'evicted; waiting for the Pod to be deleted';
      if (r.kind === 'evicted') await tracker.waitGone(w.ref, deadline);
    } else {
      w.lastReason = 'terminating; waiting for the Pod to be deleted';
      await tracker.waitGone(w.ref, deadline);
    }
    pending.delete(podKey(w.ref));
    result.evicted.push(w.ref);
    progress();
  };

  const guarded = async (w: Work): Promise<void> => {
    try {
      await one(w);
    } catch (err) {
      if (deadline.aborted) return; // reported below as left over
      pending.delete(podKey(w.ref));
      result.failed.push({ pod: w.ref, reason: err instanceof Error ? err.message : String(err) });
      progress();
    }
  };
  await Promise.all(work.map(guarded));
  stopWatch.abort();
  await Promise.all([watching, budgets.close()]);
  if (o.signal.aborted) throw new CancelledError('drain cancelled', { cause: o.signal.reason });
  for (const w of work) {
    if (!pending.has(podKey(w.ref))) continue;
    const why = w.lastReason ?? 'waiting to be evicted';
    result.failed.push({ pod: w.ref, reason: `drain timed out after ${c.timeout}s: ${why}` });
  }
  return { ...result, total, succeeded: result.failed.length === 0 };
}
