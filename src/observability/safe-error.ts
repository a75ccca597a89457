// Turns any error into a small plain object that is safe to log. got's errors carry the request
// options (headers with X-Auth-Token, the JSON body with the password) and the response (with
// X-Subject-Token); we keep only facts that cannot hold a secret: type, message, stack, code,
// status, method, the URL without query or user info, the OpenStack request id, and our own
// typed-error fields; causes are followed the same way.

export interface SafeError {
  type: string;
  message: string;
  stack?: string;
  code?: string | number;
  status?: number;
  method?: string;
  url?: string;
  requestId?: string;
  details?: unknown;
  issues?: unknown;
  tried?: unknown;
  blockers?: unknown;
  cause?: SafeError | string;
}

const SECRET_PARAM = /password|secret|token|signature|credential/i;

/** The URL without user info or fragment, and with secret-looking query values censored. */
export function safeUrl(raw: unknown): string | undefined {
  const text = raw instanceof URL ? raw.href : typeof raw === 'string' ? raw : undefined;
  if (text === undefined) return undefined;
  try {
    const u = new URL(text);
    u.username = '';
    u.password = '';
    u.hash = '';
    for (const name of [...u.searchParams.keys()]) {
      if (SECRET_PARAM.test(name)) u.searchParams.set(name, 'REDACTED');
    }
    return u.toString();
  } catch {
    return undefined;
  }
}

/** Rewrites every URL inside a text (got puts the full URL into its error messages). */
export const scrubUrls = (text: string): string =>
  text.replace(/\bhttps?:\/\/[^\s"'<>]+/g, (m) => safeUrl(m) ?? '[url]');

const get = (o: unknown, ...keys: string[]): unknown => {
  let cur = o;
  for (const k of keys) {
    if (cur === null || (typeof cur !== 'object' && typeof cur !== 'function')) return undefined;
    try {
      cur = (cur as Record<string, unknown>)[k];
    } catch {
      return undefined;
    }
  }
  return cur;
};

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function safeError(err: Error, depth = 0): SafeError {
  const out: SafeError = {
    type: err.constructor?.name || err.name || 'Error',
    message: scrubUrls(String(err.message)),
  };
  if (err.stack) out.stack = scrubUrls(err.stack);
  const code = get(err, 'code');
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  const status = get(err, 'response', 'statusCode') ?? get(err, 'status') ?? get(err, 'statusCode');
  if (typeof status === 'number') out.status = status;
  const method = str(get(err, 'options', 'method'));
  if (method) out.method = method;
  const url = safeUrl(get(err, 'options', 'url') ?? get(err, 'url'));
  if (url) out.url = url;
  const requestId = str(get(err, 'response', 'headers', 'x-openstack-request-id'));
  if (requestId) out.requestId = requestId;
  // Our typed errors (src/errors.ts) hold only safe facts by construction.
  for (const k of ['details', 'issues', 'tried', 'blockers'] as const) {
    const v = get(err, k);
    if (v !== undefined) out[k] = v;
  }
  const cause = get(err, 'cause');
  if (cause instanceof Error) out.cause = depth < 5 ? safeError(cause, depth + 1) : cause.message;
  else if (typeof cause === 'string') out.cause = cause;
  return out;
}
