// The REST verbs on one resource route: get, list, watch, create, update, patch, delete,
// deletecollection, the status subresource and pods/eviction.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { admitBody, admitPatched } from './admit.ts';
import { withCreateDefaults } from './defaults.ts';
import { evict, type EvictionHook } from './eviction.ts';
import type { CreateHook } from './extensions.ts';
import type { ResourceType } from './resources.ts';
import { badRequest, methodNotAllowed, notFoundPath, success } from './status.ts';
import type { ObjectStore } from './store.ts';
import { toTable, wantsTable } from './table.ts';
import type { DeleteOptions, KubeObject } from './types.ts';
import { serveWatch, type WatchOptions } from './watch-stream.ts';

export interface RestContext {
  store: ObjectStore;
  evictionHooks: readonly EvictionHook[];
  createHooks: readonly CreateHook[];
  watch: WatchOptions;
}

export interface ResourceRequest {
  rt: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  watchPath: boolean;
  query: URLSearchParams;
  /** Parsed request body (undefined for GET/DELETE without body). */
  body: unknown;
  contentType: string;
}

export type Reply = (status: number, body: unknown) => void;

const truthy = (v: string | null): boolean => v === '1' || v === 'true';

function optNumber(v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw badRequest(`invalid number: ${v}`);
  return n;
}

function asObject(body: unknown): KubeObject {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw badRequest('the request body must be a JSON object');
  const o = body as KubeObject;
  o.metadata ??= {};
  return o;
}

function listResponse(
  rt: ResourceType,
  store: ObjectStore,
  r: ResourceRequest,
  req: IncomingMessage,
): unknown {
  const page = store.listPage(rt.id, {
    namespace: r.namespace,
    labelSelector: r.query.get('labelSelector') ?? undefined,
    fieldSelector: r.query.get('fieldSelector') ?? undefined,
    limit: optNumber(r.query.get('limit')),
    continue: r.query.get('continue') ?? undefined,
  });
  const metadata: Record<string, unknown> = { resourceVersion: page.resourceVersion };
  if (page.continue) metadata.continue = page.continue;
  if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
  if (wantsTable(req)) return toTable(rt, page.items, metadata, r.query.get('includeObject'));
  // Serialized by hand so a 50,000-item list is one pass over the stored objects.
  const head = JSON.stringify({
    kind: rt.listKind,
    apiVersion: rt.group ? `${rt.group}/${rt.version}` : rt.version,
    metadata,
  });
  return { raw: `${head.slice(0, -1)},"items":[${page.items.map((o) => JSON.stringify(o)).join(',')}]}` };
}

function deleteOptions(r: ResourceRequest): DeleteOptions {
  const body = (r.body && typeof r.body === 'object' ? r.body : {}) as DeleteOptions;
  const grace = optNumber(r.query.get('gracePeriodSeconds'));
  return {
    ...body,
    ...(grace !== undefined ? { gracePeriodSeconds: grace } : {}),
    ...(r.query.get('propagationPolicy')
      ? { propagationPolicy: r.query.get('propagationPolicy') as string }
      : {}),
  };
}

/** HTTP create: defaults filled in; the real server ignores status where a status subresource owns it. */
function prepareCreate(rt: ResourceType, obj: KubeObject): KubeObject {
  if (rt.builtin) return withCreateDefaults(rt, obj);
  if (rt.statusSubresource && !rt.builtin) {
    const { status: _s, ...rest } = obj;
    return rest;
  }
  return obj;
}

function checkBodyNames(r: ResourceRequest, obj: KubeObject): void {
  if (r.namespace && obj.metadata.namespace && obj.metadata.namespace !== r.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (r.name !== undefined && obj.metadata.name !== undefined && obj.metadata.name !== r.name) {
    throw badRequest(
      `the name of the object (${obj.metadata.name}) does not match the name on the URL (${r.name})`,
    );
  }
}

function handleGet(
  ctx: RestContext,
  r: ResourceRequest,
  req: IncomingMessage,
  res: ServerResponse,
  reply: Reply,
): void {
  const { rt, store } = { rt: r.rt, store: ctx.store };
  if (r.name === undefined) {
    if (r.watchPath || truthy(r.query.get('watch'))) {
      const includeObject = r.query.get('includeObject');
      serveWatch(
        store,
        rt,
        {
          namespace: r.namespace,
          labelSelector: r.query.get('labelSelector') ?? undefined,
          fieldSelector: r.query.get('fieldSelector') ?? undefined,
          resourceVersion: r.query.get('resourceVersion') ?? undefined,
          timeoutSeconds: optNumber(r.query.get('timeoutSeconds')),
          allowWatchBookmarks: truthy(r.query.get('allowWatchBookmarks')),
          sendInitialEvents: truthy(r.query.get('sendInitialEvents')),
          render: wantsTable(req)
            ? (o) =>
                JSON.stringify(
                  toTable(rt, [o], { resourceVersion: o.metadata.resourceVersion }, includeObject),
                )
            : undefined,
        },
        res,
        ctx.watch,
      );
      return;
    }
    reply(200, listResponse(rt, store, r, req));
    return;
  }
  if (r.subresource && r.subresource !== 'status') throw notFoundPath();
  const obj = store.getRef(rt.id, r.namespace, r.name);
  reply(
    200,
    wantsTable(req)
      ? toTable(rt, [obj], { resourceVersion: obj.metadata.resourceVersion }, r.query.get('includeObject'))
      : obj,
  );
}

function handlePost(ctx: RestContext, r: ResourceRequest, dryRun: boolean, reply: Reply): void {
  const { rt, store } = { rt: r.rt, store: ctx.store };
  if (r.name !== undefined) {
    if (rt.id !== 'pods' || r.subresource !== 'eviction') throw methodNotAllowed();
    const eviction = asObject(r.body);
    const ns = r.namespace ?? 'default';
    const status = evict(store, ctx.evictionHooks, ns, r.name, eviction, dryRun);
    reply(status.code, status);
    return;
  }
  const obj = admitBody(rt, asObject(r.body));
  checkBodyNames(r, obj);
  if (rt.namespaced) obj.metadata.namespace = r.namespace ?? obj.metadata.namespace;
  for (const hook of ctx.createHooks) {
    const refused = hook(rt.id, obj);
    if (refused) return reply(refused.code, refused);
  }
  reply(201, dryRun ? obj : store.createRef(rt.id, prepareCreate(rt, obj)));
}

function handleDeleteCollection(ctx: RestContext, r: ResourceRequest, dryRun: boolean, reply: Reply): void {
  const { rt, store } = { rt: r.rt, store: ctx.store };
  const items = store.listPage(rt.id, {
    namespace: r.namespace,
    labelSelector: r.query.get('labelSelector') ?? undefined,
    fieldSelector: r.query.get('fieldSelector') ?? undefined,
  }).items;
  const opts = deleteOptions(r);
  const deleted = dryRun
    ? items
    : items.map((o) => store.deleteRef(rt.id, o.metadata.namespace, o.metadata.name ?? '', opts).object);
  reply(200, {
    kind: rt.listKind,
    apiVersion: rt.group ? `${rt.group}/${rt.version}` : rt.version,
    metadata: {},
    items: deleted,
  });
}

function handleObjectWrite(
  ctx: RestContext,
  r: ResourceRequest & { name: string },
  method: string,
  dryRun: boolean,
  reply: Reply,
): void {
  const { rt, store } = { rt: r.rt, store: ctx.store };
  if (r.subresource !== undefined && r.subresource !== 'status') throw methodNotAllowed();
  const statusOnly = r.subresource === 'status';
  if (dryRun) {
    // Dry runs change nothing; answering the current object is enough for the clients we serve.
    reply(200, method === 'PUT' ? asObject(r.body) : store.getRef(rt.id, r.namespace, r.name));
    return;
  }
  if (method === 'PUT') {
    const obj = admitBody(rt, asObject(r.body));
    checkBodyNames(r, obj);
    obj.metadata.name = r.name;
    if (rt.namespaced) obj.metadata.namespace = r.namespace;
    reply(200, store.updateRef(rt.id, obj, statusOnly));
  } else if (method === 'PATCH') {
    const sub = {
      ...(statusOnly ? { subresource: 'status' as const } : {}),
      admit: (o: KubeObject) => admitPatched(rt, o),
    };
    reply(200, store.patchRef(rt.id, r.namespace, r.name, r.contentType, r.body, sub));
  } else if (method === 'DELETE') {
    const { object, deleted } = store.deleteRef(rt.id, r.namespace, r.name, deleteOptions(r));
    // Built-in kinds answer a finished deletion with a Status naming what went, except pods (whose
    // registry returns the deleted object, as every kind does for a pending deletion).
    if (deleted && rt.id === 'pods') {
      const at = store.stamps.at();
      // The stored object is shared with watch streams: answer a copy.
      const metadata = { deletionTimestamp: at, deletionGracePeriodSeconds: 0, ...object.metadata };
      reply(200, { ...object, metadata });
    } else if (deleted && rt.builtin) {
      const details = {
        name: r.name,
        ...(rt.group ? { group: rt.group } : {}),
        kind: rt.plural,
        uid: object.metadata.uid,
      };
      reply(200, { ...success(200), details });
    } else reply(200, object);
  } else throw methodNotAllowed();
}

export function handleResource(
  ctx: RestContext,
  r: ResourceRequest,
  req: IncomingMessage,
  res: ServerResponse,
  reply: Reply,
): void {
  if (r.rt.namespaced && r.name !== undefined && !r.namespace) throw notFoundPath();
  if (!r.rt.namespaced && r.namespace) throw notFoundPath();
  const method = req.method ?? 'GET';
  const dryRun = r.query.has('dryRun');
  if (method === 'GET') handleGet(ctx, r, req, res, reply);
  else if (method === 'POST') handlePost(ctx, r, dryRun, reply);
  else if (r.name === undefined) {
    if (method !== 'DELETE') throw methodNotAllowed();
    handleDeleteCollection(ctx, r, dryRun, reply);
  } else handleObjectWrite(ctx, { ...r, name: r.name }, method, dryRun, reply);
}
