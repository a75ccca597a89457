// Orphaning deletions (`kubectl delete --cascade=orphan`): the garbage collector's part, done at once.
import type { Bucket } from './bucket.ts';
import type { DeleteOptions, KubeObject } from './types.ts';

/** The finalizer an owner carries while the garbage collector orphans its dependents. */
export const ORPHAN_FINALIZER = 'orphan';

/** Does this deletion leave the object's dependents behind (their references to it removed)? */
export const orphans = (opts: DeleteOptions): boolean =>
  opts.propagationPolicy === 'Orphan' ||
  (opts.propagationPolicy === undefined && opts.orphanDependents === true);

/**
 * Removes every reference to the owner `uid` from its dependents, each through `commit` (a change
 * their watchers see). A namespaced owner's dependents live in its namespace; a cluster-scoped
 * owner's anywhere.
 */
export function dropOwnerReferences(
  buckets: Iterable<Bucket>,
  namespace: string | undefined,
  uid: string | undefined,
  commit: (bucket: Bucket, key: string, old: KubeObject, next: KubeObject) => void,
): void {
  for (const dependents of buckets) {
    if (namespace !== undefined && !dependents.rt.namespaced) continue;
    for (const k of [...dependents.keys(namespace !== undefined ? { namespace } : {})]) {
      const o = dependents.objects.get(k);
      const refs = o?.metadata.ownerReferences;
      if (!o || !refs?.some((r) => r.uid === uid)) continue;
      const { ownerReferences: _gone, ...meta } = o.metadata;
      const rest = refs.filter((r) => r.uid !== uid);
      commit(dependents, k, o, { ...o, metadata: rest.length ? { ...meta, ownerReferences: rest } : meta });
    }
  }
}
