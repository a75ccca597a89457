// Maps API server answers to the typed errors of src/errors.ts. Messages carry the method,
// the path (without query) and the server's Status message: never headers, tokens or bodies.
import {
  ApiError,
  AuthError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  TransientError,
  type ApiErrorDetails,
} from '../errors.ts';
import { noAnswerText } from '../no-answer.ts';
import type { KubeStatus } from './types.ts';

/** Parses a response body as a Status; raw text (proxies, HTML) becomes the message. */
export function parseStatus(code: number, text: string): KubeStatus {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') return parsed;
  } catch {
    // not JSON: fall through
  }
  const trimmed = text.trim().slice(0, 200);
  return { code, ...(trimmed ? { message: trimmed } : {}) };
}

export function errorForStatus(code: number, status: KubeStatus, method: string, path: string): ApiError {
  const details: ApiErrorDetails = { api: 'kubernetes', status: code, method, url: path };
  const message = `kubernetes ${method} ${path}: ${code}${status.reason ? ` ${status.reason}` : ''}${
    status.message ? `: ${status.message}` : ''
  }`;
  if (code === 401)
    return new AuthError(
      `${message} (hint: the API server refused the credentials: check the kubeconfig's token or certificate, or the ServiceAccount)`,
      details,
    );
  if (code === 403)
    return new ForbiddenError(
      `${message} (hint: drainer's ServiceAccount lacks this right: daemonset/clusterrole.yaml and its components grant what drainer uses)`,
      details,
    );
  if (code === 404) return new NotFoundError(message, details);
  if (code === 409) return new ConflictError(message, details);
  if (code === 429 || code >= 500) return new TransientError(message, details);
  if (code === 415) return new ApiError('UNSUPPORTED', message, details);
  return new ApiError('API', message, details);
}

/**
 * The system's reason a request got no answer: the first error code down the cause chain (fetch
 * puts it on err.cause, sometimes deeper; node:https on err itself), else the innermost message
 * (fetch's "bad port" for a port it never dials), else the error's name.
 */
function osReason(err: unknown): string {
  let e: unknown = err;
  let last: string | undefined;
  for (let depth = 0; e instanceof Error && depth < 6; depth++) {
    const c = (e as { code?: unknown }).code;
    if (typeof c === 'string') return c;
    last = e.message || last;
    e = e.cause;
  }
  if (err instanceof Error && last !== undefined && last !== err.message) return last;
  return err instanceof Error ? err.name : 'error';
}

/** A request that never got an answer (refused, reset, DNS, timeout). */
export function connectionError(
  err: unknown,
  method: string,
  path: string,
  timeoutMs?: number,
  server?: string,
): TransientError {
  const cause = osReason(err);
  const words = noAnswerText(cause, {
    setting: 'the server in the kubeconfig (kubeconfig, KUBECONFIG)',
    caSetting: 'the kubeconfig (certificate-authority)',
    ...(timeoutMs ? { timeoutMs } : {}),
  });
  return new TransientError(
    `kubernetes ${method} ${path}${server ? ` at ${server}` : ''}: ${words}`,
    { api: 'kubernetes', method, url: path },
    { cause: err },
  );
}

/** True for answers a JSON patch guarded by a `test` op gives when the guard failed. */
export const isGuardFailure = (e: unknown): boolean =>
  e instanceof ApiError && (e.status === 409 || e.status === 422);
