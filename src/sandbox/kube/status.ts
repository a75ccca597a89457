// Status objects with the reasons, codes and message wording of the real API server
// (k8s.io/apimachinery/pkg/api/errors), so clients that branch on them behave as in a cluster.
import { StatusError, type Status, type StatusCause } from './types.ts';

/** A resource as errors name it: plural plus group ("pods", "nodemaintenances.nodemaintenance.medik8s.io"). */
export interface GroupResource {
  readonly group: string;
  readonly plural: string;
}

const qualified = (gr: GroupResource): string => (gr.group ? `${gr.plural}.${gr.group}` : gr.plural);

function details(gr: GroupResource, name: string): NonNullable<Status['details']> {
  return gr.group ? { name, group: gr.group, kind: gr.plural } : { name, kind: gr.plural };
}

export function failure(
  code: number,
  reason: string | undefined,
  message: string,
  extra?: Partial<Status>,
): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code };
  if (reason) s.reason = reason;
  return { ...s, ...extra };
}

export const success = (code = 200): Status => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Success',
  code,
});

export const notFound = (gr: GroupResource, name: string): StatusError =>
  new StatusError(
    failure(404, 'NotFound', `${qualified(gr)} "${name}" not found`, { details: details(gr, name) }),
  );

export const alreadyExists = (gr: GroupResource, name: string): StatusError =>
  new StatusError(
    failure(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, {
      details: details(gr, name),
    }),
  );

export const conflict = (gr: GroupResource, name: string, why: string): StatusError =>
  new StatusError(
    failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, {
      details: details(gr, name),
    }),
  );

export const modifiedConflict = (gr: GroupResource, name: string): StatusError =>
  conflict(
    gr,
    name,
    'the object has been modified; please apply your changes to the latest version and try again',
  );

/** 422 Invalid; `kind` is the object's Kind as the real message shows it. */
export function invalid(kind: string, name: string, causes: StatusCause[], group = ''): StatusError {
  const text = causes.map((c) => (c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? ''))).join(', ');
  const d: NonNullable<Status['details']> = { name, kind, causes };
  if (group) d.group = group;
  return new StatusError(
    failure(422, 'Invalid', `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${text}`, {
      details: d,
    }),
  );
}

export const badRequest = (message: string): StatusError =>
  new StatusError(failure(400, 'BadRequest', message));

export const methodNotAllowed = (): StatusError =>
  new StatusError(
    failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {
      details: {},
    }),
  );

export const notFoundPath = (): StatusError =>
  new StatusError(
    failure(404, 'NotFound', 'the server could not find the requested resource', { details: {} }),
  );

/**
 * 415 for a PATCH the resource does not take. A patch type it does not support (strategic merge on a
 * custom resource) names the accepted ones; a content type that is no patch type at all gets the
 * router's bare answer, as the real server gives them.
 */
export const unsupportedPatch = (accepted: readonly string[], knownPatchType = true): StatusError =>
  new StatusError(
    knownPatchType
      ? failure(
          415,
          'UnsupportedMediaType',
          `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
        )
      : failure(415, 'UnsupportedMediaType', '415: Unsupported Media Type', { details: {} }),
  );

export const gone = (message: string): StatusError => new StatusError(failure(410, 'Expired', message));

export function tooManyRequests(message: string, causes: StatusCause[], retryAfterSeconds = 0): StatusError {
  const d: NonNullable<Status['details']> = { causes };
  if (retryAfterSeconds > 0) d.retryAfterSeconds = retryAfterSeconds;
  return new StatusError(failure(429, 'TooManyRequests', message, { details: d }));
}

export const forbidden = (gr: GroupResource, name: string, why: string): StatusError =>
  new StatusError(
    failure(403, 'Forbidden', `${qualified(gr)} "${name}" is forbidden: ${why}`, {
      details: details(gr, name),
    }),
  );

export const unauthorized = (): StatusError => new StatusError(failure(401, 'Unauthorized', 'Unauthorized'));

export const internalError = (message: string): StatusError =>
  new StatusError(failure(500, 'InternalError', `Internal error occurred: ${message}`, { details: {} }));

/** The reason the real server gives for an HTTP code, used by injected faults. */
export function reasonFor(code: number): string | undefined {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    409: 'Conflict',
    410: 'Expired',
    415: 'UnsupportedMediaType',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return reasons[code];
}
