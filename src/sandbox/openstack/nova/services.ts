// os-services: list with exact host/binary filters; before 2.53 the action-style updates
// (enable, disable, disable-log-reason) addressed by host+binary; from 2.53 PUT by UUID.
import type { Reply } from '../http.ts';
import { isObject, pyRepr, pyStr } from '../http.ts';
import { atLeast } from '../microversion.ts';
import type { NovaContext } from './context.ts';
import { badRequest, extraProperties, invalidInput, notFound, requireAdmin } from './context.ts';
import { renderService } from './render.ts';
import { BOOLISH, boolish } from './boolish.ts';

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export function listServices(ctx: NovaContext): Reply {
  requireAdmin(ctx, 'os_compute_api:os-services:list');
  const host = ctx.query.get('host');
  const binary = ctx.query.get('binary');
  const services = ctx.model.services.filter(
    (s) => (host === null || s.host === host) && (binary === null || s.binary === binary),
  );
  return { status: 200, body: { services: services.map((s) => renderService(s, ctx.version)) } };
}

export function updateService(ctx: NovaContext, id: string): Reply {
  requireAdmin(ctx, 'os_compute_api:os-services:update');
  const body = isObject(ctx.body) ? ctx.body : {};
  return atLeast(ctx.version, 53) ? updateByUuid(ctx, id, body) : updateLegacy(ctx, id, body);
}

function updateLegacy(ctx: NovaContext, action: string, body: Record<string, unknown>): Reply {
  for (const field of ['host', 'binary']) {
    if (typeof body[field] !== 'string') throw badRequest(`'${field}' is a required property`);
  }
  const host = body.host as string;
  const binary = body.binary as string;
  if (!['enable', 'disable', 'disable-log-reason'].includes(action)) throw notFound('Unknown action');
  const svc = ctx.model.services.find((s) => s.host === host && s.binary === binary);
  if (!svc) throw notFound(`Host '${host}' is not mapped to any cell`);
  if (action === 'enable') {
    ctx.model.setService(svc, { status: 'enabled', disabledReason: null });
    return { status: 200, body: { service: { host, binary, status: 'enabled' } } };
  }
  if (action === 'disable') {
    ctx.model.setService(svc, { status: 'disabled', disabledReason: null });
    return { status: 200, body: { service: { host, binary, status: 'disabled' } } };
  }
  const reason = body.disabled_reason;
  if (typeof reason !== 'string') throw badRequest('Missing disabled reason field');
  checkReason(reason);
  ctx.model.setService(svc, { status: 'disabled', disabledReason: reason });
  return { status: 200, body: { service: { host, binary, status: 'disabled', disabled_reason: reason } } };
}

function checkReason(reason: unknown): void {
  if (typeof reason !== 'string') {
    throw invalidInput('disabled_reason', pyStr(reason), `${pyRepr(reason)} is not of type 'string'`);
  }
  if (reason.length > 255) throw invalidInput('disabled_reason', reason, `${pyRepr(reason)} is too long`);
}

function updateByUuid(ctx: NovaContext, id: string, body: Record<string, unknown>): Reply {
  const extra = extraProperties(body, ['status', 'disabled_reason', 'forced_down']);
  if (extra) throw badRequest(extra);
  if (body.status !== undefined && body.status !== 'enabled' && body.status !== 'disabled') {
    throw invalidInput(
      'status',
      pyStr(body.status),
      `${pyRepr(body.status)} is not one of ['enabled', 'disabled']`,
    );
  }
  if (body.disabled_reason !== undefined) checkReason(body.disabled_reason);
  const forcedDown = body.forced_down === undefined ? undefined : boolish(body.forced_down);
  if (body.forced_down !== undefined && forcedDown === undefined) {
    throw invalidInput(
      'forced_down',
      pyStr(body.forced_down),
      `${pyRepr(body.forced_down)} is not one of ${pyRepr(BOOLISH)}`,
    );
  }
  if (!UUID_RE.test(id)) throw badRequest(`Invalid uuid ${id}`);
  const svc = ctx.model.services.find((s) => s.uuid === id);
  if (!svc) throw notFound(`Service ${id} could not be found.`);
  if (body.status === undefined && body.forced_down === undefined) {
    throw badRequest("No updates were requested. Fields 'status' or 'forced_down' should be specified.");
  }
  if (body.disabled_reason !== undefined && body.status !== 'disabled') {
    const status = body.status === undefined ? 'None' : pyStr(body.status);
    throw badRequest(`Specifying 'disabled_reason' with status '${status}' is invalid.`);
  }
  const changes: Parameters<typeof ctx.model.setService>[1] = {};
  if (body.status === 'enabled') Object.assign(changes, { status: 'enabled', disabledReason: null });
  if (body.status === 'disabled') {
    Object.assign(changes, {
      status: 'disabled',
      disabledReason: (body.disabled_reason as string | undefined) ?? null,
    });
  }
  if (forcedDown !== undefined) changes.forcedDown = forcedDown;
  ctx.model.setService(svc, changes);
  return { status: 200, body: { service: renderService(svc, ctx.version) } };
}
