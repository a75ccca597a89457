// os-hypervisors: list/detail/show; the name pattern is a SUBSTRING match (404 when none
// match): `/os-hypervisors/{pattern}/search` before 2.53, `?hypervisor_hostname_pattern=` after.
import type { Reply } from '../http.ts';
import { atLeast } from '../microversion.ts';
import type { NovaContext } from './context.ts';
import { badRequest, notFound, requireAdmin } from './context.ts';
import type { ComputeNode } from './model.ts';
import { renderHypervisor } from './render.ts';
import { nextLink, parseLimit } from './paging.ts';

function idOf(ctx: NovaContext, n: ComputeNode): string {
  return atLeast(ctx.version, 53) ? n.uuid : String(n.id);
}

function matching(ctx: NovaContext, pattern: string): ComputeNode[] {
  const found = ctx.model.nodes.filter((n) => n.hostname.includes(pattern));
  if (found.length === 0) throw notFound(`No hypervisor matching '${pattern}' could be found.`);
  return found;
}

export function listHypervisors(ctx: NovaContext, detail: boolean): Reply {
  requireAdmin(ctx, `os_compute_api:os-hypervisors:${detail ? 'list-detail' : 'list'}`);
  const v = ctx.version;
  const q = ctx.query;
  const modern = atLeast(v, 53);
  const pattern = modern ? q.get('hypervisor_hostname_pattern') : null;
  const withServers =
    modern && ['true', '1', 'yes', 'on'].includes((q.get('with_servers') ?? '').toLowerCase());
  const paged = atLeast(v, 33);
  if (pattern !== null) {
    if (paged && (q.has('limit') || q.has('marker'))) {
      throw badRequest(
        'The server could not comply with the request since it is either malformed or otherwise incorrect.',
      );
    }
    const nodes = matching(ctx, pattern);
    return {
      status: 200,
      body: { hypervisors: nodes.map((n) => renderHypervisor(ctx, n, detail, withServers)) },
    };
  }
  let nodes = ctx.model.nodes;
  if (!paged) {
    return {
      status: 200,
      body: { hypervisors: nodes.map((n) => renderHypervisor(ctx, n, detail, withServers)) },
    };
  }
  const marker = q.get('marker');
  if (marker !== null) {
    const at = nodes.findIndex((n) => idOf(ctx, n) === marker);
    if (at < 0) throw badRequest(`marker [${marker}] not found`);
    nodes = nodes.slice(at + 1);
  }
  const limit = parseLimit(ctx);
  const page = nodes.slice(0, limit);
  const body: Record<string, unknown> = {
    hypervisors: page.map((n) => renderHypervisor(ctx, n, detail, withServers)),
  };
  const last = page.at(-1);
  if (last && page.length === limit) {
    body.hypervisors_links = nextLink(
      ctx,
      detail ? 'os-hypervisors/detail' : 'os-hypervisors',
      idOf(ctx, last),
    );
  }
  return { status: 200, body };
}

/** GET /os-hypervisors/{pattern}/search and …/servers (removed in 2.53). */
export function searchHypervisors(ctx: NovaContext, pattern: string, withServers: boolean): Reply {
  if (atLeast(ctx.version, 53)) throw notFound();
  requireAdmin(ctx, `os_compute_api:os-hypervisors:${withServers ? 'servers' : 'search'}`);
  const nodes = matching(ctx, pattern);
  return {
    status: 200,
    body: { hypervisors: nodes.map((n) => renderHypervisor(ctx, n, false, withServers)) },
  };
}

export function showHypervisor(ctx: NovaContext, id: string): Reply {
  requireAdmin(ctx, 'os_compute_api:os-hypervisors:show');
  const node = ctx.model.nodes.find((n) => idOf(ctx, n) === id);
  if (!node) {
    if (atLeast(ctx.version, 53) && !/^[0-9a-f-]{32,36}$/i.test(id)) throw badRequest(`Invalid uuid ${id}`);
    throw notFound(`Hypervisor with ID '${id}' could not be found.`);
  }
  const withServers = atLeast(ctx.version, 53) && ctx.query.get('with_servers') === 'true';
  return { status: 200, body: { hypervisor: renderHypervisor(ctx, node, true, withServers) } };
}
