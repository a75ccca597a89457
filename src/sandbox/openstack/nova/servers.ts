// GET /servers, /servers/detail, /servers/{id}. Visibility as Nova: without all_tenants even
// an admin sees only its own project; all_tenants is admin-only (403); admin-only filters
// such as `host` are silently dropped for others. Newest first, paged by limit/marker.
import type { Reply } from '../http.ts';
import type { NovaContext } from './context.ts';
import { badRequest, notFound, novaFault } from './context.ts';
import type { Server } from './model.ts';
import { isDeleted, serverStatus } from './model.ts';
import { nextLink, parseLimit } from './paging.ts';
import { renderServer, renderServerBrief } from './render.ts';

const FALSE_WORDS = new Set(['0', 'f', 'false', 'n', 'no', 'off']);

function allTenants(ctx: NovaContext, detail: boolean): boolean {
  const raw = ctx.query.get('all_tenants');
  if (raw === null) return false;
  const on = raw === '' || !FALSE_WORDS.has(raw.toLowerCase());
  if (on && !ctx.admin) {
    throw novaFault(
      403,
      `Policy doesn't allow os_compute_api:servers:${detail ? 'detail' : 'index'}:get_all_tenants to be performed.`,
    );
  }
  return on;
}

/** Newest first, as Nova's default sort (created_at desc, id desc). */
function byAge(a: Server, b: Server): number {
  return b.createdAt - a.createdAt || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0);
}

/** Nova's `changes-since` (ISO 8601): servers whose updated_at is at or after it. */
function changesSince(raw: string | null): number | undefined {
  if (raw === null) return undefined;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw badRequest(`Invalid input for query parameters changes-since. Value: ${raw}.`);
  return t;
}

function filtered(ctx: NovaContext, detail: boolean): Server[] {
  const q = ctx.query;
  const all = allTenants(ctx, detail);
  const project = ctx.admin && all ? (q.get('project_id') ?? q.get('tenant_id')) : ctx.token.project.id;
  const host = ctx.admin ? q.get('host') : null;
  const node = ctx.admin ? q.get('node') : null;
  const status = q.get('status')?.toUpperCase() ?? null;
  const name = q.get('name');
  const since = changesSince(q.get('changes-since'));
  let nameRe: RegExp | undefined;
  try {
    nameRe = name === null ? undefined : new RegExp(name);
  } catch {
    nameRe = undefined;
  }
  return [...ctx.model.servers.values()]
    .filter(
      (s) =>
        (project === null || s.tenantId === project) &&
        (host === null || s.host === host) &&
        (node === null || s.node === node) &&
        (status === null || serverStatus(s.vmState, s.taskState) === status) &&
        (nameRe === undefined || nameRe.test(s.name)) &&
        // deleted ones only for changes-since, as status DELETED
        (since === undefined ? !isDeleted(s) : s.updatedAt >= since),
    )
    .sort(byAge);
}

export function listServers(ctx: NovaContext, detail: boolean): Reply {
  let servers = filtered(ctx, detail);
  const marker = ctx.query.get('marker');
  if (marker !== null) {
    // The marker is any existing server; the page continues after it in the global order.
    const m = ctx.model.servers.get(marker);
    if (!m) throw badRequest(`marker [${marker}] not found`);
    servers = servers.filter((s) => byAge(m, s) < 0);
  }
  const limit = parseLimit(ctx);
  const page = servers.slice(0, limit);
  const body: Record<string, unknown> = {
    servers: page.map((s) => (detail ? renderServer(ctx, s) : renderServerBrief(ctx, s))),
  };
  const last = page.at(-1);
  if (last && page.length === limit) {
    body.servers_links = nextLink(ctx, detail ? 'servers/detail' : 'servers', last.id);
  }
  return { status: 200, body };
}

/** A server the caller may see (admins: any), else Nova's 404. */
export function findServer(ctx: NovaContext, id: string): Server {
  const s = ctx.model.servers.get(id);
  if (!s || isDeleted(s) || (!ctx.admin && s.tenantId !== ctx.token.project.id)) {
    throw notFound(`Instance ${id} could not be found.`);
  }
  return s;
}

export function showServer(ctx: NovaContext, id: string): Reply {
  return { status: 200, body: { server: renderServer(ctx, findServer(ctx, id), true) } };
}
