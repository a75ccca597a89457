// kubectl drain's pod filters, in kubectl's order (pkg/drain/filters.go): DaemonSet, mirror, local
// storage, unreplicated. The first filter that keeps a pod decides; any error fails the whole drain
// before anything is evicted. Pods a plugin handles and pods already terminating come first.
import { isNotFoundError } from '../errors.ts';
import type { DrainConfig } from '../config/schema.ts';
import type { KubeTransport } from './http.ts';
import type { KubePod, OwnerReference } from './types.ts';

export const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

export const DRAIN_MESSAGES = {
  daemonSetIgnored: 'ignoring DaemonSet-managed Pods',
  mirror: 'mirror Pod (managed by the kubelet)',
  localStorageFatal: 'Pods with local storage (set drain.deleteEmptyDirData to override)',
  localStorageWarning: 'deleting Pods with local storage',
  unmanagedFatal: 'cannot delete Pods that declare no controller (set drain.force to override)',
  unmanagedWarning: 'deleting Pods that declare no controller',
} as const;

export type PodDecision =
  | { readonly action: 'evict'; readonly warning?: string }
  /** Already terminating: nothing to evict, only wait for it to go. */
  | { readonly action: 'wait' }
  | { readonly action: 'ignore'; readonly reason: string }
  | { readonly action: 'error'; readonly reason: string };

export type DrainFilterConfig = Pick<DrainConfig, 'deleteEmptyDirData' | 'force'>;

export interface FilterDeps {
  readonly k: KubeTransport;
  readonly config: DrainFilterConfig;
  readonly skipPod?: ((pod: KubePod) => string | undefined) | undefined;
  readonly signal?: AbortSignal;
}

const controllerOf = (pod: KubePod): OwnerReference | undefined =>
  pod.metadata.ownerReferences?.find((r) => r.controller === true);

const finished = (pod: KubePod): boolean =>
  pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

const hasLocalStorage = (pod: KubePod): boolean => (pod.spec?.volumes ?? []).some((v) => v.emptyDir != null);

async function daemonSetFilter(pod: KubePod, d: FilterDeps): Promise<PodDecision | undefined> {
  const ref = controllerOf(pod);
  if (!ref || ref.kind !== 'DaemonSet' || finished(pod)) return undefined;
  const path = `/apis/apps/v1/namespaces/${pod.metadata.namespace ?? 'default'}/daemonsets/${ref.name}`;
  try {
    await d.k.request({ path, ...(d.signal ? { signal: d.signal } : {}) });
  } catch (err) {
    // an orphaned DaemonSet pod is deleted only with force, as kubectl does
    const why = isNotFoundError(err) ? `daemonsets.apps "${ref.name}" not found` : errorText(err);
    if (isNotFoundError(err) && d.config.force) return { action: 'evict', warning: why };
    return { action: 'error', reason: why };
  }
  return { action: 'ignore', reason: DRAIN_MESSAGES.daemonSetIgnored };
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function mirrorFilter(pod: KubePod): PodDecision | undefined {
  return pod.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined
    ? { action: 'ignore', reason: DRAIN_MESSAGES.mirror }
    : undefined;
}

function localStorageFilter(pod: KubePod, c: DrainFilterConfig): PodDecision | undefined {
  if (!hasLocalStorage(pod) || finished(pod)) return undefined;
  if (!c.deleteEmptyDirData) return { action: 'error', reason: DRAIN_MESSAGES.localStorageFatal };
  return { action: 'evict', warning: DRAIN_MESSAGES.localStorageWarning };
}

function unreplicatedFilter(pod: KubePod, c: DrainFilterConfig): PodDecision | undefined {
  if (finished(pod) || controllerOf(pod)) return undefined;
  if (!c.force) return { action: 'error', reason: DRAIN_MESSAGES.unmanagedFatal };
  return { action: 'evict', warning: DRAIN_MESSAGES.unmanagedWarning };
}

/** Decides what the drain does with one pod. */
export async function classifyPod(pod: KubePod, d: FilterDeps): Promise<PodDecision> {
  const handled = d.skipPod?.(pod);
  if (handled) return { action: 'ignore', reason: handled };
  if (pod.metadata.deletionTimestamp) return { action: 'wait' };
  let warning: string | undefined;
  const steps: (() => Promise<PodDecision | undefined> | PodDecision | undefined)[] = [
    () => daemonSetFilter(pod, d),
    () => mirrorFilter(pod),
    () => localStorageFilter(pod, d.config),
    () => unreplicatedFilter(pod, d.config),
  ];
  for (const step of steps) {
    const decision = await step();
    if (!decision) continue;
    if (decision.action !== 'evict') return decision;
    warning = decision.warning ?? warning; // like kubectl, the last warning wins
  }
  return warning ? { action: 'evict', warning } : { action: 'evict' };
}
