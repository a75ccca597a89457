// /servers/{id}/metadata[/{key}] as Nova answers it (checked against Nova 2.93 in
// test/functional/metadata.test.ts; no microversion changes it). Order of checks: body schema (400)
// → server lookup (404) → item lookup (404) → lock (409, admins exempt) → state (409) → quota (403).
// Keys match ^[a-zA-Z0-9-_:. ]{1,255}$ (so no "/"), values are strings of at most 255.
import type { Reply } from '../http.ts';
import { isObject, pyRepr, pyStr } from '../http.ts';
import type { NovaContext } from './context.ts';
import { badRequest, conflict, extraProperties, invalidInput, novaFault, notFound } from './context.ts';
import type { Server } from './model.ts';
import { findServer } from './servers.ts';

const KEY = /^[a-zA-Z0-9-_:. ]{1,255}$/;
const KEY_SOURCE = '^[a-zA-Z0-9-_:. ]{1,255}$';
/** Nova's default quota of metadata items per server (quota.metadata_items). */
const MAX_ITEMS = 128;
const WRITABLE = new Set(['active', 'paused', 'suspended', 'stopped']);
const NOT_FOUND = 'Metadata item was not found';

/** jsonschema's checks of a metadata object: keys by pattern, values strings of at most 255. */
function checkItems(field: string, raw: unknown): Record<string, string> {
  if (!isObject(raw)) throw invalidInput(field, pyStr(raw), `${pyRepr(raw)} is not of type 'object'`);
  for (const [k, v] of Object.entries(raw)) {
    if (!KEY.test(k))
      throw invalidInput(
        field,
        pyRepr(raw),
        `${pyRepr(k)} does not match any of the regexes: '${KEY_SOURCE}'`,
      );
    if (typeof v !== 'string') throw invalidInput(k, pyStr(v), `${pyRepr(v)} is not of type 'string'`);
    if (v.length > 255) throw invalidInput(k, v, `${pyRepr(v)} is too long`);
  }
  return raw as Record<string, string>;
}

function body(ctx: NovaContext, field: 'metadata' | 'meta'): Record<string, string> {
  const raw = ctx.body;
  if (!isObject(raw)) throw badRequest(`${pyRepr(raw)} is not of type 'object'`);
  if (!(field in raw)) throw badRequest(`'${field}' is a required property`);
  const extra = extraProperties(raw, [field]);
  if (extra) throw badRequest(extra);
  const items = checkItems(field, raw[field]);
  if (field === 'meta') {
    const n = Object.keys(items).length;
    if (n > 1) throw invalidInput(field, pyRepr(items), `${pyRepr(items)} has too many properties`);
    if (n < 1) throw invalidInput(field, pyRepr(items), `${pyRepr(items)} does not have enough properties`);
  }
  return items;
}

function checkWritable(ctx: NovaContext, s: Server, action: 'update metadata' | 'delete metadata'): void {
  // Nova's lock check lets the admin through (os_compute_api:os-lock-server:unlock:unlock_override)
  if (s.locked && !ctx.admin) throw conflict(`Instance ${s.id} is locked`);
  if (!WRITABLE.has(s.vmState))
    throw conflict(`Cannot '${action}' instance ${s.id} while it is in vm_state ${s.vmState}`);
  if (s.taskState !== null)
    throw conflict(`Cannot '${action}' instance ${s.id} while it is in task_state ${s.taskState}`);
}

function write(
  ctx: NovaContext,
  s: Server,
  items: Record<string, string>,
  replace: boolean,
): Record<string, string> {
  checkWritable(ctx, s, 'update metadata');
  const next = replace ? { ...items } : { ...s.metadata, ...items };
  if (Object.keys(next).length > MAX_ITEMS)
    throw novaFault(403, `Maximum number of metadata items exceeds ${MAX_ITEMS}`);
  ctx.model.setServer(s, { metadata: next });
  return next;
}

export function listMetadata(ctx: NovaContext, id: string): Reply {
  return { status: 200, body: { metadata: { ...findServer(ctx, id).metadata } } };
}

export function showMetadataItem(ctx: NovaContext, id: string, key: string): Reply {
  const s = findServer(ctx, id);
  if (!Object.hasOwn(s.metadata, key)) throw notFound(NOT_FOUND);
  return { status: 200, body: { meta: { [key]: s.metadata[key] } } };
}

/** POST: merges (200, not 201, as Nova keeps for compatibility) and answers the whole set. */
export function mergeMetadata(ctx: NovaContext, id: string): Reply {
  const items = body(ctx, 'metadata');
  return { status: 200, body: { metadata: write(ctx, findServer(ctx, id), items, false) } };
}

/** PUT …/metadata: replaces the whole set. */
export function replaceMetadata(ctx: NovaContext, id: string): Reply {
  const items = body(ctx, 'metadata');
  return { status: 200, body: { metadata: write(ctx, findServer(ctx, id), items, true) } };
}

/** PUT …/metadata/{key}: one item, whose key must be the URI's. */
export function setMetadataItem(ctx: NovaContext, id: string, key: string): Reply {
  const items = body(ctx, 'meta');
  const s = findServer(ctx, id);
  if (!Object.hasOwn(items, key)) throw badRequest('Request body and URI mismatch');
  write(ctx, s, items, false);
  return { status: 200, body: { meta: items } };
}

export function deleteMetadataItem(ctx: NovaContext, id: string, key: string): Reply {
  const s = findServer(ctx, id);
  if (!Object.hasOwn(s.metadata, key)) throw notFound(NOT_FOUND);
  checkWritable(ctx, s, 'delete metadata');
  const { [key]: _gone, ...rest } = s.metadata;
  ctx.model.setServer(s, { metadata: rest });
  return { status: 204 };
}
