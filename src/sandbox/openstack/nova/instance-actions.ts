// A server's action log: every accepted action is kept with the request id its answer carried and
// who asked (nova/compute/instance_actions.py names them; nova/compute/api.py records one per call).
// GET /servers/{id}/os-instance-actions lists them newest first (nova/db instance_actions_get:
// created_at desc, id desc); a deleted server's from 2.21; updated_at from 2.58. No paging here:
// the sandbox's servers have a few actions each.
import type { Reply } from '../http.ts';
import { novaTime } from '../ids.ts';
import { atLeast } from '../microversion.ts';
import type { NovaContext } from './context.ts';
import { notFound } from './context.ts';
import { isDeleted } from './model.ts';

/** The action a request body names (POST /servers/{id}/action), as Nova logs it. */
const LOGGED: Readonly<Record<string, string>> = {
  'os-stop': 'stop',
  'os-start': 'start',
  migrate: 'migrate',
  resize: 'resize',
  confirmResize: 'confirmResize',
  revertResize: 'revertResize',
  'os-migrateLive': 'live-migration',
  shelve: 'shelve',
  shelveOffload: 'shelveOffload',
  unshelve: 'unshelve',
};

/** Logs an accepted call on the server: `name` is the action body's key, or `delete`. */
export function logAction(ctx: NovaContext, serverId: string, name: string): void {
  const action = name === 'delete' ? 'delete' : LOGGED[name];
  if (!action) return;
  ctx.model.recordAction(serverId, {
    action,
    requestId: ctx.requestId,
    userId: ctx.token.user.id,
    projectId: ctx.token.project.id,
    startTime: ctx.model.now(),
  });
}

export function listInstanceActions(ctx: NovaContext, id: string): Reply {
  const s = ctx.model.servers.get(id);
  const visible = s && (ctx.admin || s.tenantId === ctx.token.project.id);
  if (!s || !visible || (isDeleted(s) && !atLeast(ctx.version, 21)))
    throw notFound(`Instance ${id} could not be found.`);
  const newest = [...(ctx.model.actions.get(id) ?? [])].reverse();
  return {
    status: 200,
    body: {
      instanceActions: newest.map((a) => ({
        action: a.action,
        instance_uuid: id,
        message: null,
        project_id: a.projectId,
        request_id: a.requestId,
        start_time: novaTime(a.startTime),
        user_id: a.userId,
        ...(atLeast(ctx.version, 58) ? { updated_at: novaTime(a.startTime) } : {}),
      })),
    },
  };
}
