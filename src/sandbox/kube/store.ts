// The sandbox's etcd: every object of every resource, one global resourceVersion counter,
// synchronous and in-process. Stored objects are never mutated (each change stores a new
// object), so history and watch streams can share them; callers outside get deep copies.
import { clone as copy } from './clone.ts';
import {
  checkPreconditions,
  establishCrd,
  parseBody,
  podGrace,
  randomSuffix,
  tooOld,
} from './store-rules.ts';
import { conformToSchema } from './schema.ts';
import { Bucket, objectKey, type ChangeListener } from './bucket.ts';
import { ChangeDelivery } from './delivery.ts';
import { dropOwnerReferences, ORPHAN_FINALIZER, orphans } from './orphan.ts';
import { listPage, type ListOptions, type ListPage } from './list-page.ts';
import { APPLY_PATCH, deepEqual } from './patch.ts';
import { patched, patchType } from './patch-request.ts';
import { builtinResources, resourceFromCrd, type ResourceType } from './resources.ts';
import { replaced, stampCreated } from './server-fields.ts';
import { CREATED, DELETED, Stamps, type StampClock } from './stamps.ts';
import { alreadyExists, conflict, invalid, modifiedConflict, notFound, notFoundPath } from './status.ts';
import { StatusError, type DeleteOptions, type KubeObject, type WatchEventType } from './types.ts';

export interface StoreOptions {
  /** The scenario clock objects are stamped by (default real time). */
  clock?: StampClock;
  /** Changes each resource keeps for watches that resume (default 10,000). */
  historySize?: number;
}

export type Subscriber = (type: WatchEventType, obj: KubeObject) => void;

const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
const CRD_ID = 'customresourcedefinitions.apiextensions.k8s.io';

export class ObjectStore {
  readonly #buckets = new Map<string, Bucket>();
  /** What objects are stamped with, and the exact moments behind the stamps. */
  readonly stamps: Stamps;
  readonly #historySize: number;
  readonly #delivery = new ChangeDelivery();
  #rv = 1;

  constructor(opts: StoreOptions = {}) {
    this.stamps = new Stamps(opts.clock);
    this.#historySize = opts.historySize ?? 10_000;
    for (const rt of builtinResources()) this.#buckets.set(rt.id, new Bucket(rt, this.#historySize));
    for (const name of SYSTEM_NAMESPACES) {
      this.create('namespaces', { metadata: { name }, status: { phase: 'Active' } });
    }
  }

  // ---- resources ----------------------------------------------------------------------------

  /** The resource types currently served (built-ins plus established CRDs). */
  resources(): ResourceType[] {
    return [...this.#buckets.values()].map((b) => b.rt);
  }

  resource(id: string): ResourceType {
    return this.#bucket(id).rt;
  }

  findResource(group: string, version: string, plural: string): ResourceType | undefined {
    for (const b of this.#buckets.values()) {
      if (b.rt.group === group && b.rt.plural === plural && b.rt.versions.includes(version)) return b.rt;
    }
    return undefined;
  }

  #bucket(id: string): Bucket {
    const b = this.#buckets.get(id);
    if (!b) throw notFoundPath();
    return b;
  }

  get resourceVersion(): string {
    return String(this.#rv);
  }

  // ---- reads --------------------------------------------------------------------------------

  /** The object or a 404 StatusError. */
  get(res: string, namespace: string | undefined, name: string): KubeObject {
    return copy(this.getRef(res, namespace, name));
  }

  /** The object, or undefined when absent. */
  find(res: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const b = this.#bucket(res);
    const o = b.objects.get(objectKey(b.rt.namespaced ? namespace : undefined, name));
    return o && copy(o);
  }

  /** The stored object itself (shared; never mutate). */
  getRef(res: string, namespace: string | undefined, name: string): KubeObject {
    const b = this.#bucket(res);
    const o = b.objects.get(objectKey(b.rt.namespaced ? namespace : undefined, name));
    if (!o) throw notFound(b.rt, name);
    return o;
  }

  list(res: string, opts: Omit<ListOptions, 'limit' | 'continue'> = {}): KubeObject[] {
    return this.listPage(res, opts).items.map(copy);
  }

  listPage(res: string, opts: ListOptions = {}): ListPage {
    return listPage(this.#bucket(res), this.#rv, opts);
  }

  // ---- watches ------------------------------------------------------------------------------

  /** Calls back for every change of `res` from now on; returns the unsubscribe function. */
  subscribe(res: string, cb: Subscriber): () => void {
    return this.watch(res, undefined, (e) => cb(e.type, copy(e.obj)));
  }

  /**
   * Replays changes after `fromRv` (410 StatusError when the history is too short) and then calls
   * back live. Objects passed are the stored ones: never mutate them.
   */
  watch(res: string, fromRv: number | undefined, listener: ChangeListener): () => void {
    const b = this.#bucket(res);
    if (fromRv !== undefined) {
      const past = b.since(fromRv);
      if (!past) throw new StatusError(tooOld(fromRv, b.floor));
      for (const e of past) listener(e);
    }
    b.listeners.add(listener);
    return () => b.listeners.delete(listener);
  }

  /** Makes every resourceVersion before now too old to watch from (the 410 path). */
  compactHistory(): void {
    for (const b of this.#buckets.values()) b.compact(this.#rv);
  }

  /** Records a change and tells listeners, in resourceVersion order (see ChangeDelivery). */
  #emit(b: Bucket, type: WatchEventType, obj: KubeObject, prev: KubeObject | undefined, rv: number): void {
    this.#delivery.emit(b, { type, obj, prev, rv });
  }

  #nextRv(): number {
    return ++this.#rv;
  }

  // ---- writes -------------------------------------------------------------------------------

  /**
   * Creates an object. Status given here is kept (seeding convenience); the HTTP layer strips what
   * the real server would not accept.
   */
  create(res: string, input: KubeObject): KubeObject {
    return copy(this.createRef(res, input));
  }

  createRef(res: string, input: KubeObject): KubeObject {
    const b = this.#bucket(res);
    const rt = b.rt;
    const obj = copy(conformToSchema(rt, { ...input, metadata: input.metadata ?? {} }));
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = meta.generateName + randomSuffix();
    if (!meta.name) {
      throw invalid(rt.kind, '', [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: name or generateName is required',
          field: 'metadata.name',
        },
      ]);
    }
    if (rt.namespaced) {
      meta.namespace ||= 'default';
      if (!this.#bucket('namespaces').objects.has(meta.namespace)) {
        throw notFound({ group: '', plural: 'namespaces' }, meta.namespace);
      }
    } else delete meta.namespace;
    const key = objectKey(meta.namespace, meta.name);
    if (b.objects.has(key)) throw alreadyExists(rt, meta.name);
    if (res === CRD_ID) establishCrd(obj, this.stamps.at());
    stampCreated(rt, obj, (uid) => this.stamps.stamp(uid, CREATED));
    const rv = this.#nextRv();
    meta.resourceVersion = String(rv);
    b.put(key, obj);
    this.#emit(b, 'ADDED', obj, undefined, rv);
    if (res === CRD_ID) this.#serveCrd(obj);
    return obj;
  }

  /** Replaces an object (the main resource: status is kept from the stored object when a subresource owns it). */
  update(res: string, input: KubeObject): KubeObject {
    return copy(this.updateRef(res, input, false));
  }

  /** Replaces only the status (the /status subresource). */
  updateStatus(res: string, input: KubeObject): KubeObject {
    return copy(this.updateRef(res, input, true));
  }

  updateRef(res: string, input: KubeObject, statusOnly: boolean): KubeObject {
    const b = this.#bucket(res);
    const name = input.metadata?.name ?? '';
    const key = objectKey(b.rt.namespaced ? input.metadata.namespace || 'default' : undefined, name);
    const old = b.objects.get(key);
    if (!old) throw notFound(b.rt, name);
    const wantRv = input.metadata.resourceVersion;
    if (wantRv && wantRv !== old.metadata.resourceVersion) throw modifiedConflict(b.rt, name);
    if (input.metadata.uid && input.metadata.uid !== old.metadata.uid) {
      throw conflict(
        b.rt,
        name,
        `Precondition failed: UID in precondition: ${input.metadata.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    const next = statusOnly ? { ...old, status: copy(input.status) } : replaced(b.rt, old, input);
    if (next.status === undefined) delete next.status;
    return this.#commit(b, key, old, next);
  }

  /** Stores `next` unless nothing changed; removes the object when its deletion has completed. */
  #commit(b: Bucket, key: string, old: KubeObject, proposed: KubeObject): KubeObject {
    const next = conformToSchema(b.rt, proposed);
    next.metadata = { ...next.metadata, resourceVersion: old.metadata.resourceVersion };
    if (deepEqual(old, next)) return old;
    const m = next.metadata;
    if (m.finalizers?.length === 0) delete m.finalizers;
    if (m.deletionTimestamp && !m.finalizers?.length && !(m.deletionGracePeriodSeconds ?? 0)) {
      return this.#remove(b, key, next);
    }
    const rv = this.#nextRv();
    m.resourceVersion = String(rv);
    b.put(key, next);
    this.#emit(b, 'MODIFIED', next, old, rv);
    return next;
  }

  #remove(b: Bucket, key: string, last: KubeObject): KubeObject {
    const old = b.remove(key);
    this.stamps.forget(last.metadata.uid);
    const rv = this.#nextRv();
    const gone = { ...last, metadata: { ...last.metadata, resourceVersion: String(rv) } };
    this.#emit(b, 'DELETED', gone, old, rv);
    if (b.rt.id === CRD_ID) this.#unserveCrd(gone);
    if (b.rt.id === 'namespaces') this.#purgeNamespace(gone.metadata.name ?? '');
    return gone;
  }

  /** Applies a patch of the given content type; `subresource` 'status' patches only the status. */
  patch(
    res: string,
    namespace: string | undefined,
    name: string,
    contentType: string,
    body: unknown,
    opts: { subresource?: 'status' } = {},
  ): KubeObject {
    return copy(this.patchRef(res, namespace, name, contentType, body, opts));
  }

  patchRef(
    res: string,
    namespace: string | undefined,
    name: string,
    contentType: string,
    body: unknown,
    opts: { subresource?: 'status'; admit?: (next: KubeObject) => KubeObject } = {},
  ): KubeObject {
    const b = this.#bucket(res);
    const type = patchType(b.rt, contentType);
    const patchDoc = parseBody(body, type);
    const current = b.objects.get(objectKey(b.rt.namespaced ? namespace : undefined, name));
    if (!current) {
      if (type === APPLY_PATCH)
        return this.createRef(res, {
          ...(patchDoc as KubeObject),
          metadata: { ...(patchDoc as KubeObject).metadata, name, namespace },
        });
      throw notFound(b.rt, name);
    }
    const next = patched(b.rt, current, name, type, patchDoc);
    return this.updateRef(res, opts.admit ? opts.admit(next) : next, opts.subresource === 'status');
  }

  /**
   * Deletes an object. With finalizers it only gets a deletionTimestamp; a scheduled, running pod
   * with a grace period gets deletionTimestamp + deletionGracePeriodSeconds and stays until
   * `finalizeDeletion` (the kubelet's part). Returns the object's last state and whether it is gone.
   */
  delete(
    res: string,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): { object: KubeObject; deleted: boolean } {
    const r = this.deleteRef(res, namespace, name, opts);
    return { object: copy(r.object), deleted: r.deleted };
  }

  deleteRef(
    res: string,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): { object: KubeObject; deleted: boolean } {
    const b = this.#bucket(res);
    const key = objectKey(b.rt.namespaced ? namespace : undefined, name);
    const old = b.objects.get(key);
    if (!old) throw notFound(b.rt, name);
    checkPreconditions(b.rt, old, opts);
    const grace = res === 'pods' ? podGrace(old, opts.gracePeriodSeconds) : 0;
    if (orphans(opts)) return this.#deleteOrphaning(b, key, old, grace);
    const m = old.metadata;
    if (grace === 0 && !m.finalizers?.length) return { object: this.#remove(b, key, old), deleted: true };
    // Graceful: only ever shorten an existing grace period.
    if (m.deletionTimestamp && (m.deletionGracePeriodSeconds ?? 0) <= grace)
      return { object: old, deleted: false };
    // the end of the grace period, in scenario seconds
    const when = this.stamps.stamp(m.uid, DELETED, this.stamps.clock.now() + grace * 1000);
    const next: KubeObject = {
      ...old,
      metadata: { ...m, deletionTimestamp: when, deletionGracePeriodSeconds: grace },
    };
    const rv = this.#nextRv();
    next.metadata.resourceVersion = String(rv);
    b.put(key, next);
    this.#emit(b, 'MODIFIED', next, old, rv);
    return { object: next, deleted: false };
  }

  /**
   * A deletion with propagationPolicy Orphan (`kubectl delete --cascade=orphan`), the garbage
   * collector's part done at once: the owner is marked deleted with the `orphan` finalizer, every
   * dependent's reference to it is removed (each a change its watchers see), then the finalizer goes
   * and with it the owner, unless other finalizers or a pod's grace period keep it. The answer is
   * the marked owner, as the real server's is.
   */
  #deleteOrphaning(
    b: Bucket,
    key: string,
    old: KubeObject,
    grace: number,
  ): { object: KubeObject; deleted: boolean } {
    const m = old.metadata;
    const marked = this.#commit(b, key, old, {
      ...old,
      metadata: {
        ...m,
        deletionTimestamp:
          m.deletionTimestamp ?? this.stamps.stamp(m.uid, DELETED, this.stamps.clock.now() + grace * 1000),
        deletionGracePeriodSeconds: m.deletionGracePeriodSeconds ?? grace,
        finalizers: [...(m.finalizers ?? []).filter((f) => f !== ORPHAN_FINALIZER), ORPHAN_FINALIZER],
      },
    });
    dropOwnerReferences(
      this.#buckets.values(),
      b.rt.namespaced ? m.namespace : undefined,
      m.uid,
      (d, k, o, next) => this.#commit(d, k, o, next),
    );
    const finalizers = (marked.metadata.finalizers ?? []).filter((f) => f !== ORPHAN_FINALIZER);
    this.#commit(b, key, marked, { ...marked, metadata: { ...marked.metadata, finalizers } });
    return { object: marked, deleted: false };
  }

  /**
   * Finishes a graceful deletion (what the kubelet does when a pod's containers stopped): removes
   * the object, or leaves it waiting for its finalizers. Returns true when the object is gone.
   */
  finalizeDeletion(res: string, namespace: string | undefined, name: string): boolean {
    const b = this.#bucket(res);
    if (!b.objects.has(objectKey(b.rt.namespaced ? namespace : undefined, name))) return true;
    return this.deleteRef(res, namespace, name, { gracePeriodSeconds: 0 }).deleted;
  }

  // ---- CRDs and namespaces ------------------------------------------------------------------

  #serveCrd(crd: KubeObject): void {
    const rt = resourceFromCrd(crd);
    if (!rt || this.#buckets.has(rt.id)) return;
    const b = new Bucket(rt, this.#historySize);
    // Its watch window opens now: nothing of it happened before.
    b.compact(this.#rv);
    this.#buckets.set(rt.id, b);
  }

  #unserveCrd(crd: KubeObject): void {
    const rt = resourceFromCrd(crd);
    const b = rt && this.#buckets.get(rt.id);
    if (!b || b.rt.builtin) return;
    for (const [key, o] of [...b.objects]) this.#remove(b, key, o);
    this.#buckets.delete(b.rt.id);
  }

  /** The namespace controller's job, done at once: a deleted namespace takes its objects along. */
  #purgeNamespace(ns: string): void {
    for (const b of this.#buckets.values()) {
      if (!b.rt.namespaced) continue;
      for (const key of [...b.keys({ namespace: ns })]) {
        const o = b.objects.get(key);
        if (o) this.#remove(b, key, o);
      }
    }
  }
}
