// Server migrations (2.22 force-complete, 2.23 list/show, 2.24 abort, 2.65 abort queued)
// and the admin-wide GET /os-migrations with its filters and 2.59 paging.
import type { Reply } from '../http.ts';
import { isObject } from '../http.ts';
import { atLeast } from '../microversion.ts';
import type { NovaContext } from './context.ts';
import { badRequest, conflict, notFound, requireAdmin } from './context.ts';
import type { Migration } from './model.ts';
import { IN_PROGRESS } from './model.ts';
import { nextLink, parseLimit } from './paging.ts';
import { renderMigration, renderServerMigration } from './render.ts';
import { findServer } from './servers.ts';

function inProgressLive(m: Migration): boolean {
  return m.type === 'live-migration' && IN_PROGRESS.has(m.status);
}

function migrationOf(ctx: NovaContext, serverId: string, mid: string): Migration {
  const m = ctx.model.migrations.find((x) => String(x.id) === mid && x.instanceUuid === serverId);
  if (!m) throw notFound(`Migration ${mid} not found for instance ${serverId}`);
  return m;
}

export function listServerMigrations(ctx: NovaContext, serverId: string): Reply {
  if (!atLeast(ctx.version, 23)) throw notFound();
  findServer(ctx, serverId);
  requireAdmin(ctx, 'os_compute_api:servers:migrations:index');
  const migrations = ctx.model.migrations.filter((m) => m.instanceUuid === serverId && inProgressLive(m));
  return { status: 200, body: { migrations: migrations.map((m) => renderServerMigration(ctx, m)) } };
}

export function showServerMigration(ctx: NovaContext, serverId: string, mid: string): Reply {
  if (!atLeast(ctx.version, 23)) throw notFound();
  findServer(ctx, serverId);
  requireAdmin(ctx, 'os_compute_api:servers:migrations:show');
  const m = migrationOf(ctx, serverId, mid);
  if (!inProgressLive(m)) throw notFound(`Live migration ${mid} for server ${serverId} is not in progress.`);
  return { status: 200, body: { migration: renderServerMigration(ctx, m) } };
}

function invalidState(m: Migration, method: string): Error {
  return badRequest(
    `Migration ${m.id} state of instance ${m.instanceUuid} is ${m.status}. Cannot ${method} while the migration is in this state.`,
  );
}

export function abortServerMigration(ctx: NovaContext, serverId: string, mid: string): Reply {
  if (!atLeast(ctx.version, 24)) throw notFound();
  const server = findServer(ctx, serverId);
  requireAdmin(ctx, 'os_compute_api:servers:migrations:delete');
  // nova/compute/api.py live_migrate_abort: check_instance_state (task_state migrating: the
  // destination clears it when the guest switches) comes before the migration's own status (400)
  if (server.taskState !== 'migrating')
    throw conflict(
      `Cannot 'abort live migration' instance ${server.id} while it is in task_state ${server.taskState ?? 'None'}`,
    );
  const m = migrationOf(ctx, serverId, mid);
  const abortable = atLeast(ctx.version, 65) ? ['running', 'queued', 'preparing'] : ['running'];
  if (m.type !== 'live-migration' || !abortable.includes(m.status))
    throw invalidState(m, 'abort live migration');
  ctx.compute.abort(m);
  return { status: 202 };
}

export function serverMigrationAction(ctx: NovaContext, serverId: string, mid: string): Reply {
  if (!atLeast(ctx.version, 22)) throw notFound();
  if (!isObject(ctx.body) || !('force_complete' in ctx.body)) {
    throw badRequest(`There is no such action: ${Object.keys(isObject(ctx.body) ? ctx.body : {})[0] ?? ''}`);
  }
  const server = findServer(ctx, serverId);
  requireAdmin(ctx, 'os_compute_api:servers:migrations:force_complete');
  const m = migrationOf(ctx, serverId, mid);
  // Nova checks the instance first (task_state migrating, else 409), then the migration (400)
  if (server.taskState !== 'migrating')
    throw conflict(
      `Cannot 'force_complete' instance ${server.id} while it is in task_state ${server.taskState ?? 'None'}`,
    );
  if (m.type !== 'live-migration' || m.status !== 'running') throw invalidState(m, 'force complete');
  ctx.compute.forceComplete(m);
  return { status: 202 };
}

export function listMigrations(ctx: NovaContext): Reply {
  requireAdmin(ctx, 'os_compute_api:os-migrations:index');
  const q = ctx.query;
  const v = ctx.version;
  const host = q.get('host');
  const want = {
    status: q.get('status'),
    instance: q.get('instance_uuid'),
    type: q.get('migration_type'),
    source: q.get('source_compute'),
    user: atLeast(v, 80) ? q.get('user_id') : null,
    project: atLeast(v, 80) ? q.get('project_id') : null,
  };
  let rows = ctx.model.migrations.filter(
    (m) =>
      (host === null || m.sourceCompute === host || m.destCompute === host) &&
      (want.status === null || m.status === want.status) &&
      (want.instance === null || m.instanceUuid === want.instance) &&
      (want.type === null || m.type === want.type) &&
      (want.source === null || m.sourceCompute === want.source) &&
      (want.user === null || m.userId === want.user) &&
      (want.project === null || m.projectId === want.project),
  );
  if (!atLeast(v, 59)) {
    return { status: 200, body: { migrations: rows.map((m) => renderMigration(ctx, m)) } };
  }
  // 2.59: newest first, paged by uuid markers.
  const newestFirst = (a: Migration, b: Migration): number => b.createdAt - a.createdAt || b.id - a.id;
  rows = [...rows].sort(newestFirst);
  const marker = q.get('marker');
  if (marker !== null) {
    const after = ctx.model.migrations.find((m) => m.uuid === marker);
    if (!after) throw badRequest(`Marker ${marker} could not be found.`);
    rows = rows.filter((m) => newestFirst(after, m) < 0);
  }
  const limit = parseLimit(ctx);
  const page = rows.slice(0, limit);
  const body: Record<string, unknown> = { migrations: page.map((m) => renderMigration(ctx, m)) };
  const last = page.at(-1);
  if (last && page.length === limit) body.migrations_links = nextLink(ctx, 'os-migrations', last.uuid);
  return { status: 200, body };
}
