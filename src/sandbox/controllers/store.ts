// The slice of the sandbox ObjectStore the controllers use, plus read-modify-write helpers.
// The store is synchronous, so a get followed by an update in the same tick cannot race a client.
import type { Stamps } from '../kube/stamps.ts';
import type { KubeObject, WatchEventType } from '../kube/types.ts';
import { isStatusError } from '../kube/types.ts';

export interface StoreLike {
  /** What objects are stamped with (real time), and the exact scenario moments behind the stamps. */
  readonly stamps: Stamps;
  get(res: string, ns: string | undefined, name: string): KubeObject;
  list(
    res: string,
    opts?: { namespace?: string; labelSelector?: string; fieldSelector?: string },
  ): KubeObject[];
  create(res: string, obj: KubeObject): KubeObject;
  update(res: string, obj: KubeObject): KubeObject;
  updateStatus(res: string, obj: KubeObject): KubeObject;
  delete(res: string, ns: string | undefined, name: string, opts?: { gracePeriodSeconds?: number }): unknown;
  subscribe(res: string, fn: (type: WatchEventType, obj: KubeObject) => void): () => void;
}

export const RES = {
  nodes: 'nodes',
  pods: 'pods',
  namespaces: 'namespaces',
  pdbs: 'poddisruptionbudgets.policy',
  replicasets: 'replicasets.apps',
  daemonsets: 'daemonsets.apps',
  kubevirts: 'kubevirts.kubevirt.io',
  vmis: 'virtualmachineinstances.kubevirt.io',
  vmims: 'virtualmachineinstancemigrations.kubevirt.io',
  vms: 'virtualmachines.kubevirt.io',
  crds: 'customresourcedefinitions.apiextensions.k8s.io',
} as const;

/** The object, or undefined when it does not exist. */
export function tryGet(
  store: StoreLike,
  res: string,
  ns: string | undefined,
  name: string,
): KubeObject | undefined {
  try {
    return store.get(res, ns, name);
  } catch (e) {
    if (isStatusError(e) && e.code === 404) return undefined;
    throw e;
  }
}

/** Deletes, ignoring "already gone". */
export function tryDelete(
  store: StoreLike,
  res: string,
  ns: string | undefined,
  name: string,
  opts?: { gracePeriodSeconds?: number },
): void {
  try {
    store.delete(res, ns, name, opts);
  } catch (e) {
    if (!(isStatusError(e) && e.code === 404)) throw e;
  }
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Applies `change` to a copy of the object and writes it back only if something changed
 * (so a controller's own writes do not wake it up forever). Returns the stored object.
 */
export function mutate(
  store: StoreLike,
  res: string,
  obj: KubeObject,
  change: (o: KubeObject) => void,
  opts: { status?: boolean } = {},
): KubeObject | undefined {
  const current = tryGet(store, res, obj.metadata.namespace, obj.metadata.name ?? '');
  if (!current) return undefined;
  const next = structuredClone(current);
  change(next);
  if (same(current, next)) return current;
  return opts.status ? store.updateStatus(res, next) : store.update(res, next);
}

/** mutate() on the status subresource. */
export const mutateStatus = (
  store: StoreLike,
  res: string,
  obj: KubeObject,
  change: (o: KubeObject) => void,
): KubeObject | undefined => mutate(store, res, obj, change, { status: true });
