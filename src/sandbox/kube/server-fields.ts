// The metadata the API server owns: what a create stamps on a new object and what a replace
// (PUT) carries over from the stored one whatever the client sent.
import { randomUUID } from 'node:crypto';
import { clone as copy } from './clone.ts';
import { deepEqual } from './patch.ts';
import { apiVersionOf, type ResourceType } from './resources.ts';
import { invalid } from './status.ts';
import type { KubeObject } from './types.ts';

/** RFC 3339 at whole seconds, as metadata timestamps are. */
export const rfc3339 = (ms: number): string =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

function specOf(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, ...rest } = o;
  return rest;
}

/** Stamps type, uid, creation time (`at`, given the uid) and generation on a new object; clears deletion fields. */
export function stampCreated(rt: ResourceType, obj: KubeObject, at: (uid: string) => string): void {
  const meta = obj.metadata;
  obj.apiVersion = apiVersionOf(rt);
  obj.kind = rt.kind;
  meta.uid = randomUUID();
  meta.creationTimestamp = at(meta.uid);
  meta.generation = 1;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
}

/**
 * The object a replace of the main resource proposes: server-owned fields from `old`, status
 * from `old` when a subresource owns it, generation bumped when the spec changed.
 */
export function replaced(rt: ResourceType, old: KubeObject, input: KubeObject): KubeObject {
  const next = copy(input);
  const m = next.metadata;
  const o = old.metadata;
  next.apiVersion = old.apiVersion;
  next.kind = old.kind;
  m.name = o.name;
  m.uid = o.uid;
  m.creationTimestamp = o.creationTimestamp;
  m.generation = o.generation;
  if (rt.namespaced) m.namespace = o.namespace;
  else delete m.namespace;
  if (o.deletionTimestamp) {
    m.deletionTimestamp = o.deletionTimestamp;
    m.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
    const added = (m.finalizers ?? []).filter((f) => !(o.finalizers ?? []).includes(f));
    if (added.length > 0) {
      throw invalid(rt.kind, o.name ?? '', [
        {
          reason: 'FieldValueForbidden',
          field: 'metadata.finalizers',
          message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        },
      ]);
    }
  } else {
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
  }
  if (rt.statusSubresource) {
    if (old.status === undefined) delete next.status;
    else next.status = old.status;
  }
  if (!deepEqual(specOf(old), specOf(next))) m.generation = (o.generation ?? 1) + 1;
  return next;
}
