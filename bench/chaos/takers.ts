// Drains that are not kubectl's: Karpenter's terminator and Cluster API's Machine drain, as their
// rules are written down (the facts behind test/e2e/karpenter.test.ts). Both evict through the
// Eviction API, retry a 429 and wait until no pod they wait for is left on the node.
//
// Karpenter (kubernetes-sigs/karpenter pkg/utils/pod/scheduling.go):
//   IsEvictable(pod) = IsActive && !ToleratesDisruptedNoScheduleTaint && !IsOwnedByNode && !HasDoNotDisrupt
//   IsDrainable(pod) = !ToleratesDisruptedNoScheduleTaint && !IsStuckTerminating && !IsOwnedByNode
//   IsWaitingEviction(pod) = !IsTerminal && IsDrainable      (the node is terminated when none is left)
//   IsActive = !IsTerminal (Succeeded/Failed) && !IsTerminating (deletionTimestamp)
//   IsStuckTerminating = terminating for more than a minute past its deletionTimestamp
// and its terminator evicts critical pods (system-node-critical, system-cluster-critical) only once
// the others are gone, DaemonSet pods after the rest of their group.
//
// Cluster API (internal/controllers/machine/drain): evicts every pod but DaemonSet and mirror pods,
// waits until they are gone, and past the Machine's nodeDrainTimeout goes on to delete the Machine
// (and its Node) whatever is left.
import type { KubeObject, KubePod, Taint } from '../../src/kube/types.ts';

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export const DISRUPTED: Taint = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };

/** Kubernetes' toleration match (an empty key with Exists tolerates every taint). */
export const tolerates = (t: Toleration, taint: Taint): boolean =>
  (!t.effect || t.effect === taint.effect) &&
  (t.operator === 'Exists'
    ? !t.key || t.key === taint.key
    : t.key === taint.key && (t.value ?? '') === (taint.value ?? ''));

const spec = (p: KubeObject) =>
  (p.spec ?? {}) as { tolerations?: Toleration[]; priorityClassName?: string; nodeName?: string };
const phase = (p: KubeObject) => (p.status as { phase?: string } | undefined)?.phase;
export const ownedBy = (p: KubeObject, kind: string) =>
  (p.metadata.ownerReferences ?? []).some((r) => r.kind === kind);

export const toleratesDisrupted = (p: KubeObject) =>
  (spec(p).tolerations ?? []).some((t) => tolerates(t, DISRUPTED));
export const isTerminal = (p: KubeObject) => phase(p) === 'Succeeded' || phase(p) === 'Failed';
const isTerminating = (p: KubeObject) => p.metadata.deletionTimestamp !== undefined;
const isActive = (p: KubeObject) => !isTerminal(p) && !isTerminating(p);
/** When a pod's deletionTimestamp is, on the clock of `now` (by default the stamp's own). */
export type DeletedAt = (p: KubeObject) => number;
const stampedDeletion: DeletedAt = (p) => Date.parse(p.metadata.deletionTimestamp ?? '');
const stuckTerminating = (p: KubeObject, now: number, deletedAt: DeletedAt) =>
  isTerminating(p) && now - deletedAt(p) > 60_000;
const doNotDisrupt = (p: KubeObject) => p.metadata.annotations?.['karpenter.sh/do-not-disrupt'] === 'true';

export const isEvictable = (p: KubeObject) =>
  isActive(p) && !toleratesDisrupted(p) && !ownedBy(p, 'Node') && !doNotDisrupt(p);
const isDrainable = (p: KubeObject, now: number, deletedAt: DeletedAt) =>
  !toleratesDisrupted(p) && !stuckTerminating(p, now, deletedAt) && !ownedBy(p, 'Node');
export const isWaitingEviction = (p: KubeObject, now: number, deletedAt = stampedDeletion) =>
  !isTerminal(p) && isDrainable(p, now, deletedAt);
const critical = (p: KubeObject) =>
  ['system-node-critical', 'system-cluster-critical'].includes(spec(p).priorityClassName ?? '');

/** What a taker needs: the node's pods, an eviction (its answer code), and when to stop waiting. */
export interface TakerPort {
  pods(node: string): Promise<KubePod[]>;
  /** The eviction's HTTP status (201/200 admitted, 429 refused by a budget, 404 gone …). */
  evict(pod: KubePod): Promise<number>;
  /** The cluster's clock. */
  now(): number;
  /** A pod's deletionTimestamp on now()'s clock; by default the stamp itself (stamps are on it). */
  deletedAt?: DeletedAt;
  sleep(ms: number): Promise<void>;
  readonly signal?: AbortSignal;
}

export interface TakerResult {
  /** true: nothing it waits for is left; false: it gave up (its deadline, or stopped). */
  readonly done: boolean;
  readonly evicted: string[];
  readonly retries: number;
}

interface TakerRules {
  waiting(p: KubePod, now: number, deletedAt: DeletedAt): boolean;
  /** The pods to evict this pass, in the taker's order (one group at a time). */
  next(waiting: KubePod[]): KubePod[];
}

async function takeAway(
  port: TakerPort,
  node: string,
  rules: TakerRules,
  o: { retryMs: number; deadline?: number },
): Promise<TakerResult> {
  const evicted: string[] = [];
  let retries = 0;
  for (;;) {
    if (port.signal?.aborted || (o.deadline !== undefined && Date.now() >= o.deadline))
      return { done: false, evicted, retries };
    let pods: KubePod[];
    try {
      pods = await port.pods(node);
    } catch {
      await port.sleep(o.retryMs); // an API fault: the controller requeues
      continue;
    }
    const now = port.now();
    const waiting = pods.filter((p) => rules.waiting(p, now, port.deletedAt ?? stampedDeletion));
    if (!waiting.length) return { done: true, evicted, retries };
    for (const p of rules.next(waiting)) {
      const code = await port.evict(p).catch(() => 0);
      if (code === 200 || code === 201)
        evicted.push(`${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`);
      else if (code === 429) retries++;
    }
    await port.sleep(o.retryMs);
  }
}

const KARPENTER: TakerRules = {
  waiting: (p, now, deletedAt) => isWaitingEviction(p, now, deletedAt),
  next(waiting) {
    const evictable = waiting.filter(isEvictable);
    const groups = [
      evictable.filter((p) => !critical(p) && !ownedBy(p, 'DaemonSet')),
      evictable.filter((p) => !critical(p) && ownedBy(p, 'DaemonSet')),
      evictable.filter((p) => critical(p) && !ownedBy(p, 'DaemonSet')),
      evictable.filter((p) => critical(p) && ownedBy(p, 'DaemonSet')),
    ];
    return groups.find((g) => g.length) ?? [];
  },
};

/** Karpenter's terminator: evict by group, retry 429, until no pod is waited for (no deadline of its own). */
export const karpenterTerminate = (
  port: TakerPort,
  node: string,
  o: { retryMs: number; deadline?: number },
) => takeAway(port, node, KARPENTER, o);

const mirror = (p: KubePod) => p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined;

const CAPI: TakerRules = {
  waiting: (p) => !isTerminal(p) && !ownedBy(p, 'DaemonSet') && !mirror(p),
  next: (waiting) => waiting.filter((p) => !isTerminating(p)),
};

/** The prefix of Cluster API's pre-drain hook annotations (cluster-api.sigs.k8s.io, Machine deletion). */
export const PRE_DRAIN_HOOK_PREFIX = 'pre-drain.delete.hook.machine.cluster.x-k8s.io';

/**
 * Cluster API's Machine drain: first it waits, with no deadline, while any pre-drain hook is on the
 * Machine (`hooks`: the Machine's annotations now); then it evicts all but DaemonSet and mirror pods
 * until none is left, or nodeDrainTimeout (counted from the drain's start, not the deletion's).
 */
export async function capiDrain(
  port: TakerPort,
  node: string,
  o: {
    retryMs: number;
    nodeDrainTimeoutMs: number;
    annotations?: () => Promise<Record<string, string>>;
    /** What the Machine controller does as its drain starts (it cordons the node). */
    beforeDrain?: () => Promise<unknown>;
  },
): Promise<TakerResult & { hookWaitMs: number }> {
  const t0 = Date.now();
  while (o.annotations && !port.signal?.aborted) {
    const hooked = Object.keys(await o.annotations().catch(() => ({ [PRE_DRAIN_HOOK_PREFIX]: '' })));
    if (!hooked.some((k) => k.startsWith(PRE_DRAIN_HOOK_PREFIX))) break;
    await port.sleep(o.retryMs);
  }
  const hookWaitMs = Date.now() - t0;
  await o.beforeDrain?.();
  const r = await takeAway(port, node, CAPI, {
    retryMs: o.retryMs,
    deadline: Date.now() + o.nodeDrainTimeoutMs,
  });
  return { ...r, hookWaitMs };
}
