// Node operations: cordon (merge patch), taints (JSON patch guarded by `test`), annotations.
import type { KubeClients } from './client.ts';
import { ConflictError } from '../errors.ts';
import { guard, GUARD_ATTEMPTS, guardedPatch } from './guarded.ts';
import { MERGE_PATCH } from './http.ts';
import type { KubeNode, Taint } from './types.ts';

const nodePath = (name: string): string => `/api/v1/nodes/${encodeURIComponent(name)}`;

export function getNode(k: KubeClients, name: string, signal?: AbortSignal): Promise<KubeNode> {
  return k.request<KubeNode>({ path: nodePath(name), ...(signal ? { signal } : {}) });
}

export function setUnschedulable(k: KubeClients, name: string, unschedulable: boolean): Promise<KubeNode> {
  return k.request<KubeNode>({
    method: 'PATCH',
    path: nodePath(name),
    contentType: MERGE_PATCH,
    // null removes the field, as `kubectl uncordon` leaves it
    body: { spec: { unschedulable: unschedulable ? true : null } },
  });
}

const sameTaint = (t: Taint, key: string, effect: string): boolean => t.key === key && t.effect === effect;

/** The taints with `taint` added (or its value updated); undefined when it is there already. */
function withTaint(current: readonly Taint[] | undefined, taint: Taint): Taint[] | undefined {
  const existing = current?.find((t) => sameTaint(t, taint.key, taint.effect));
  if (existing && (existing.value ?? '') === (taint.value ?? '')) return undefined;
  const others = (current ?? []).filter((t) => !sameTaint(t, taint.key, taint.effect));
  return [...others, { ...taint, timeAdded: taint.timeAdded ?? new Date().toISOString() }];
}

/** Adds (or updates the value of) a taint matched by key and effect. Returns true when the node changed. */
export function addTaint(k: KubeClients, name: string, taint: Taint): Promise<boolean> {
  return guardedPatch<KubeNode>(k, nodePath(name), (node) => {
    const current = node.spec?.taints;
    const next = withTaint(current, taint);
    if (!next) return undefined;
    if (!node.spec)
      return [guard(node, '/spec', undefined), { op: 'add', path: '/spec', value: { taints: next } }];
    return [guard(node, '/spec/taints', current), { op: 'add', path: '/spec/taints', value: next }];
  });
}

/** Removes the taint with this key and effect. Returns true when the node changed. */
export function removeTaint(k: KubeClients, name: string, key: string, effect: string): Promise<boolean> {
  return guardedPatch<KubeNode>(k, nodePath(name), (node) => {
    const current = node.spec?.taints;
    if (!current?.some((t) => sameTaint(t, key, effect))) return undefined;
    const next = current.filter((t) => !sameTaint(t, key, effect));
    return [
      { op: 'test', path: '/spec/taints', value: current },
      next.length
        ? { op: 'replace', path: '/spec/taints', value: next }
        : { op: 'remove', path: '/spec/taints' },
    ];
  });
}

/**
 * Sets (string) or removes (null) one annotation, and any `labels` in the same PATCH. With
 * `resourceVersion` the write only succeeds on that version of the Node (409 ConflictError otherwise).
 */
export function setAnnotation(
  k: KubeClients,
  name: string,
  key: string,
  value: string | null,
  opts: { resourceVersion?: string; labels?: Record<string, string | null> } = {},
): Promise<KubeNode> {
  const metadata: Record<string, unknown> = { annotations: { [key]: value } };
  if (opts.labels) metadata.labels = opts.labels;
  if (opts.resourceVersion) metadata.resourceVersion = opts.resourceVersion;
  return k.request<KubeNode>({
    method: 'PATCH',
    path: nodePath(name),
    contentType: MERGE_PATCH,
    body: { metadata },
  });
}

/**
 * Sets one annotation (and labels) and, in the same write, cordons and/or adds a taint. The write
 * carries the resourceVersion of the Node it was computed from (`known`, else read first): a
 * concurrent writer makes it a 409, and it is computed again from a fresh read. With
 * `resourceVersion` the caller owns the conflict: the write is made on that version or not at all
 * (ConflictError). Returns the Node.
 */
export async function setAnnotationWith(
  k: KubeClients,
  name: string,
  key: string,
  value: string | null,
  opts: {
    labels?: Record<string, string | null>;
    cordon?: boolean;
    taint?: Taint;
    known?: KubeNode;
    resourceVersion?: string;
  },
): Promise<KubeNode> {
  const pinned = opts.resourceVersion;
  let node = pinned && opts.known?.metadata.resourceVersion !== pinned ? undefined : opts.known;
  for (let attempt = 1; ; attempt++) {
    node ??= await getNode(k, name);
    if (pinned && node.metadata.resourceVersion !== pinned)
      throw new ConflictError(`node ${name} changed since resourceVersion ${pinned}`, {
        api: 'kubernetes',
        status: 409,
      });
    const spec: Record<string, unknown> = {};
    if (opts.cordon && node.spec?.unschedulable !== true) spec.unschedulable = true;
    const taints = opts.taint ? withTaint(node.spec?.taints, opts.taint) : undefined;
    if (taints) spec.taints = taints;
    const metadata: Record<string, unknown> = {
      resourceVersion: node.metadata.resourceVersion,
      annotations: { [key]: value },
      ...(opts.labels ? { labels: opts.labels } : {}),
    };
    try {
      return await k.request<KubeNode>({
        method: 'PATCH',
        path: nodePath(name),
        contentType: MERGE_PATCH,
        body: Object.keys(spec).length ? { metadata, spec } : { metadata },
      });
    } catch (err) {
      if (!(err instanceof ConflictError) || pinned || attempt >= GUARD_ATTEMPTS) throw err;
      node = undefined;
    }
  }
}
