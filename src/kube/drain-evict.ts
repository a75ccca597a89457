// Evicts one pod through policy/v1 Eviction, as kubectl does: 429 (a PodDisruptionBudget says no)
// is retried every retry interval, or sooner once the budget allows a disruption again; 404 means
// already gone; any other refusal fails that pod.
import { isTransientError } from '../errors.ts';
import { sleep as defaultSleep } from './backoff.ts';
import type { KubeTransport } from './http.ts';
import { describeBlocked } from './drain-pdb.ts';
import type { KubePod, KubeStatus, PodRef } from './types.ts';

export type EvictResult =
  | { readonly kind: 'evicted' }
  /** 404, or a new pod of the same name (uid precondition failed): ours is gone. */
  | { readonly kind: 'gone' }
  | { readonly kind: 'failed'; readonly reason: string };

export interface EvictDeps {
  readonly k: KubeTransport;
  /** -1 = the pod's own grace period. */
  readonly gracePeriodSeconds: number;
  readonly retryIntervalMs: number;
  readonly signal: AbortSignal;
  /** Bounds the eviction requests in flight. */
  readonly limit: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Each 429, with a message naming the budget and its numbers. */
  readonly onBlocked: (pod: PodRef, message: string) => void;
  /** Each answer (or "error"): for drainer_evictions_total{code}. */
  readonly onAnswer?: (code: string) => void;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** After a 429: wait until a budget of the pod allows a disruption (at most the retry interval). */
  readonly budgets?: BudgetWait;
}

export interface BudgetWait {
  /** Taken before each request: budget changes after it count. */
  mark(): number;
  wait(pod: KubePod, since: number, maxMs: number, signal: AbortSignal): Promise<void>;
}

function evictionBody(pod: KubePod, gracePeriodSeconds: number): unknown {
  const deleteOptions: Record<string, unknown> = {};
  if (gracePeriodSeconds >= 0) deleteOptions.gracePeriodSeconds = gracePeriodSeconds;
  if (pod.metadata.uid) deleteOptions.preconditions = { uid: pod.metadata.uid };
  return {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace },
    deleteOptions,
  };
}

const isRetryable = (code: number): boolean => code === 502 || code === 503 || code === 504;

/** Retries until the pod is evicted, gone or refused for good; rejects only when the signal aborts. */
export async function evictPod(pod: KubePod, ref: PodRef, d: EvictDeps): Promise<EvictResult> {
  const sleep = d.sleep ?? defaultSleep;
  const path = `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/pods/${encodeURIComponent(ref.name)}/eviction`;
  const body = evictionBody(pod, d.gracePeriodSeconds);
  for (;;) {
    let code: number;
    let status: KubeStatus;
    const since = d.budgets?.mark() ?? 0;
    try {
      const res = await d.limit(() => d.k.send({ method: 'POST', path, body, signal: d.signal }));
      code = res.code;
      status = res.body ?? {};
      d.onAnswer?.(String(code));
    } catch (err) {
      if (d.signal.aborted || !isTransientError(err)) throw err;
      d.onAnswer?.('error');
      await sleep(d.retryIntervalMs, d.signal);
      continue;
    }
    if (code < 300) return { kind: 'evicted' };
    if (code === 404 || code === 409) return { kind: 'gone' };
    if (code === 429) {
      d.onBlocked(ref, await describeBlocked(d.k, pod, ref, status, d.signal));
      if (d.budgets) {
        await d.budgets.wait(pod, since, d.retryIntervalMs, d.signal);
        continue;
      }
    } else if (!isRetryable(code)) {
      return {
        kind: 'failed',
        reason: `eviction refused (${code}): ${status.message ?? status.reason ?? ''}`.trim(),
      };
    }
    await sleep(d.retryIntervalMs, d.signal);
  }
}
