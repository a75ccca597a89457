// POST /servers/{id}/action: os-migrateLive, migrate, confirmResize, revertResize, os-stop,
// os-start, shelve, shelveOffload, unshelve, resize. Order of checks as Nova: body schema → server lookup
// (404) → policy (403) → lock, host, instance state (409) → target host (400).
import type { Reply } from '../http.ts';
import { isObject, pyRepr, pyStr } from '../http.ts';
import { atLeast } from '../microversion.ts';
import { NoValidHost } from './compute.ts';
import type { NovaContext } from './context.ts';
import { badRequest, conflict, extraProperties, invalidInput, requireAdmin } from './context.ts';
import type { Server } from './model.ts';
import { findServer } from './servers.ts';
import { BOOLISH } from './boolish.ts';
import { flavorId } from './flavors.ts';
import { logAction } from './instance-actions.ts';

function checkState(server: Server, action: string, vmStates: string[]): void {
  if (!vmStates.includes(server.vmState)) {
    throw conflict(`Cannot '${action}' instance ${server.id} while it is in vm_state ${server.vmState}`);
  }
  if (server.taskState !== null) {
    throw conflict(`Cannot '${action}' instance ${server.id} while it is in task_state ${server.taskState}`);
  }
}

function checkHost(ctx: NovaContext, host: unknown): string | null {
  if (host === null || host === undefined) return null;
  if (typeof host !== 'string' || !ctx.model.computeService(host)) {
    throw badRequest(`Compute host ${pyStr(host)} could not be found.`);
  }
  return host;
}

/** The os-migrateLive body schema of each microversion range. */
function validateLiveBody(ctx: NovaContext, raw: unknown): Record<string, unknown> {
  const v = ctx.version;
  if (!isObject(raw)) {
    throw invalidInput('os-migrateLive', pyRepr(raw), `${pyRepr(raw)} is not of type 'object'`);
  }
  const required = atLeast(v, 25)
    ? ['block_migration', 'host']
    : ['block_migration', 'disk_over_commit', 'host'];
  for (const field of required) {
    if (!(field in raw))
      throw invalidInput('os-migrateLive', pyRepr(raw), `'${field}' is a required property`);
  }
  const allowed = [...required, ...(atLeast(v, 30) && !atLeast(v, 68) ? ['force'] : [])];
  const extra = extraProperties(raw, allowed);
  if (extra) throw invalidInput('os-migrateLive', pyRepr(raw), extra);
  const blockChoices = [...BOOLISH, ...(atLeast(v, 25) ? ['auto'] : [])];
  for (const field of ['block_migration', 'disk_over_commit', 'force']) {
    const value = raw[field];
    if (value === undefined) continue;
    const choices = field === 'block_migration' ? blockChoices : BOOLISH;
    if (!choices.includes(value as string | boolean)) {
      throw invalidInput(field, pyStr(value), `${pyRepr(value)} is not one of ${pyRepr(choices)}`);
    }
  }
  if (raw.host !== null && typeof raw.host !== 'string') {
    throw invalidInput('host', pyStr(raw.host), `${pyRepr(raw.host)} is not of type 'string', 'null'`);
  }
  return raw;
}

function liveMigrate(ctx: NovaContext, id: string, raw: unknown): Reply {
  const body = validateLiveBody(ctx, raw);
  const server = findServer(ctx, id);
  requireAdmin(ctx, 'os_compute_api:os-migrate-server:migrate_live');
  checkState(server, 'os-migrateLive', ['active', 'paused']);
  const host = checkHost(ctx, body.host);
  try {
    // Before 2.34 the pre-checks (scheduler) ran inside the request.
    ctx.compute.liveMigrate(server, host, atLeast(ctx.version, 34));
  } catch (err) {
    if (err instanceof NoValidHost) {
      throw badRequest(
        host === null
          ? 'No valid host was found. There are not enough hosts available.'
          : 'No valid host was found. ',
      );
    }
    throw err;
  }
  return { status: 202 };
}

function coldMigrate(ctx: NovaContext, id: string, raw: unknown): Reply {
  let host: unknown = null;
  if (raw !== null && raw !== undefined) {
    if (!isObject(raw))
      throw invalidInput('migrate', pyRepr(raw), `${pyRepr(raw)} is not of type 'object', 'null'`);
    const extra = extraProperties(raw, atLeast(ctx.version, 56) ? ['host'] : []);
    if (extra) throw invalidInput('migrate', pyRepr(raw), extra);
    host = raw.host;
  }
  const server = findServer(ctx, id);
  requireAdmin(ctx, 'os_compute_api:os-migrate-server:migrate');
  checkState(server, 'migrate', ['active', 'stopped']);
  ctx.compute.coldMigrate(server, checkHost(ctx, host));
  return { status: 202 };
}

/**
 * The owner's resize (nova/compute/api.py resize): a known flavor, not the server's own; ACTIVE or
 * STOPPED and no task; then as a cold migration that changes the flavor.
 */
function resize(ctx: NovaContext, id: string, raw: unknown): Reply {
  const ref = isObject(raw) ? raw.flavorRef : undefined;
  const m = typeof ref === 'string' ? /^flavor-c(\d+)-r(\d+)-d(\d+)$/.exec(ref) : null;
  if (!m) throw badRequest('Invalid flavorRef provided.');
  const flavor = { vcpus: Number(m[1]), ramMb: Number(m[2]), diskGb: Number(m[3]) };
  const server = findServer(ctx, id);
  checkLock(ctx, server);
  checkState(server, 'resize', ['active', 'stopped']);
  if (ref === flavorId(server)) throw badRequest('When resizing, instances must change flavor!');
  ctx.compute.coldMigrate(server, null, flavor);
  return { status: 202 };
}

function resizeFinish(ctx: NovaContext, id: string, action: 'confirmResize' | 'revertResize'): Reply {
  const server = findServer(ctx, id);
  checkState(server, action, ['resized']);
  const m = ctx.model.migrations.find(
    (x) => x.instanceUuid === id && x.type !== 'live-migration' && x.status === 'finished',
  );
  // nova/api/openstack/compute/servers.py: MigrationNotFound → 400 (a confirm that came second, too)
  if (!m) throw badRequest('Instance has not been resized.');
  if (action === 'confirmResize') {
    ctx.compute.confirmResize(server, m);
    return { status: 204 };
  }
  ctx.compute.revertResize(server, m);
  return { status: 202 };
}

/** nova/compute/api.py check_instance_lock: a locked server refuses its owner (not an admin). */
function checkLock(ctx: NovaContext, server: Server): void {
  if (server.locked && !ctx.admin) throw conflict(`Instance ${server.id} is locked`);
}

/** nova/compute/api.py check_instance_host: no host (offloaded) is InstanceNotReady, a 409. */
function checkOnHost(server: Server): void {
  if (!server.host) throw conflict(`Instance ${server.id} is not ready`);
}

/**
 * The owner's actions, as nova/compute/api.py checks them (stop: ACTIVE, RESCUED or ERROR and no
 * task; start: STOPPED; shelve: ACTIVE, STOPPED, PAUSED or SUSPENDED; unshelve: SHELVED or
 * SHELVED_OFFLOADED), then taking the time the compute manager takes (lifecycle.ts).
 */
type OwnerAction = 'stop' | 'start' | 'shelve' | 'shelveOffload' | 'unshelve';
const OWNER_STATES: Record<OwnerAction, string[]> = {
  stop: ['active', 'rescued', 'error'],
  start: ['stopped'],
  shelve: ['active', 'stopped', 'paused', 'suspended'],
  shelveOffload: ['shelved'],
  unshelve: ['shelved', 'shelved_offloaded'],
};

function ownerAction(ctx: NovaContext, id: string, action: OwnerAction): Reply {
  const server = findServer(ctx, id);
  checkLock(ctx, server);
  if (action === 'stop' || action === 'start') checkOnHost(server);
  checkState(server, action, OWNER_STATES[action]);
  const life = ctx.compute.lifecycle;
  if (action === 'shelveOffload') life.offload(server);
  else life[action](server);
  return { status: 202 };
}

/** DELETE /servers/{id}: any state, any task (api.py delete checks only the lock); 204. */
export function deleteServer(ctx: NovaContext, id: string): Reply {
  const server = findServer(ctx, id);
  checkLock(ctx, server);
  ctx.compute.lifecycle.delete(server);
  logAction(ctx, server.id, 'delete');
  return { status: 204 };
}

/** An accepted action goes into the server's action log (os-instance-actions), with this request's id. */
export function serverAction(ctx: NovaContext, id: string): Reply {
  if (!isObject(ctx.body) || Object.keys(ctx.body).length === 0) throw badRequest('Malformed request body');
  const [name = ''] = Object.keys(ctx.body);
  if (name === 'os-migrateLive' || name === 'migrate') {
    ctx.model.migrateCalls.set(id, (ctx.model.migrateCalls.get(id) ?? 0) + 1);
  }
  const reply = runAction(ctx, id, name, ctx.body[name]);
  if (reply.status < 300) logAction(ctx, id, name);
  return reply;
}

function runAction(ctx: NovaContext, id: string, name: string, arg: unknown): Reply {
  switch (name) {
    case 'os-migrateLive':
      return liveMigrate(ctx, id, arg);
    case 'migrate':
      return coldMigrate(ctx, id, arg);
    case 'resize':
      return resize(ctx, id, arg);
    case 'confirmResize':
    case 'revertResize':
      return resizeFinish(ctx, id, name);
    case 'os-stop':
      return ownerAction(ctx, id, 'stop');
    case 'os-start':
      return ownerAction(ctx, id, 'start');
    case 'shelve':
    case 'shelveOffload':
    case 'unshelve':
      return ownerAction(ctx, id, name);
    default:
      throw badRequest(`There is no such action: ${name}`);
  }
}
