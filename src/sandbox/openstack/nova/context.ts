// What every Nova handler gets, and Nova's error shapes ({"itemNotFound": {code, message}} …).
import type { TokenInfo } from '../identity.ts';
import { HttpFault } from '../http.ts';
import type { Microversion } from '../microversion.ts';
import type { ComputeSim } from './compute.ts';
import type { NovaModel } from './model.ts';

export interface NovaContext {
  method: string;
  /** Path segments after /compute/v2.1. */
  segments: string[];
  query: URLSearchParams;
  body: unknown;
  version: Microversion;
  /** This request's x-openstack-request-id (an action logged for a server carries it). */
  requestId: string;
  token: TokenInfo;
  admin: boolean;
  /** The hidden-host fault: OS-EXT-SRV-ATTR:* left out of every server. */
  hideHost: boolean;
  model: NovaModel;
  compute: ComputeSim;
  /** …/compute/v2.1 and …/compute (for "bookmark" links). */
  computeUrl: string;
  bookmarkUrl: string;
  maxLimit: number;
}

const FAULT_NAMES: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

export function novaFault(status: number, message: string): HttpFault {
  return new HttpFault({
    status,
    headers: { 'Content-Type': 'application/json; charset=UTF-8' },
    body: { [FAULT_NAMES[status] ?? 'computeFault']: { code: status, message } },
  });
}

export const badRequest = (message: string): HttpFault => novaFault(400, message);
export const notFound = (message = 'The resource could not be found.'): HttpFault => novaFault(404, message);
export const conflict = (message: string): HttpFault => novaFault(409, message);

/** 403 exactly as Nova's policy enforcement words it. */
export function requireAdmin(ctx: NovaContext, rule: string): void {
  if (!ctx.admin) throw novaFault(403, `Policy doesn't allow ${rule} to be performed.`);
}

/** Nova's "Invalid input for field/attribute …" validation message. */
export function invalidInput(field: string, value: string, detail: string): HttpFault {
  return badRequest(`Invalid input for field/attribute ${field}. Value: ${value}. ${detail}`);
}

/** jsonschema's "Additional properties are not allowed (…)" message (names sorted). */
export function extraProperties(
  body: Record<string, unknown>,
  allowed: readonly string[],
): string | undefined {
  const extra = Object.keys(body)
    .filter((k) => !allowed.includes(k))
    .sort();
  if (extra.length === 0) return undefined;
  const names = extra.map((k) => `'${k}'`).join(', ');
  return `Additional properties are not allowed (${names} ${extra.length === 1 ? 'was' : 'were'} unexpected)`;
}
