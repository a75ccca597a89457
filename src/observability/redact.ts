// Deep redaction of everything a log call carries. pino's path-based redaction cannot follow
// arbitrary depth (an error's cause's options' headers), so every logged object is walked once:
// secret-named keys are censored at any depth, errors become SafeErrors, private keys vanish.
import { safeError } from './safe-error.ts';

export const CENSOR = '[REDACTED]';

/** Keys whose values are never logged, wherever they appear (compared case-insensitively). */
export const SECRET_KEYS = [
  'password',
  'secret',
  'applicationCredentialSecret',
  'application_credential_secret',
  'token',
  'x-auth-token',
  'x-subject-token',
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'clientKey',
] as const;

const SECRET = new Set<string>(SECRET_KEYS.map((k) => k.toLowerCase()));
const SECRET_PATTERN = /password|secret|token/i;
const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

export const isSecretLogKey = (key: string): boolean =>
  SECRET.has(key.toLowerCase()) || SECRET_PATTERN.test(key);

const MAX_DEPTH = 10;

// The password of a URL's userinfo (`scheme://user:password@host`), wherever a text holds one.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#@]*@/gi;

/** A text with every URL's password censored (the user name stays: it says which account). */
export const withoutUrlPasswords = (text: string): string =>
  text.includes('@') ? text.replace(URL_PASSWORD, `$1:${CENSOR}@`) : text;

// Not `instanceof Headers`: reading the global loads undici (fetch), ~6 MB, into a daemon that never
// makes a Headers itself. One can only exist where undici is loaded already.
const isHeaders = (value: object): value is Headers =>
  Object.prototype.toString.call(value) === '[object Headers]';

function walk(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return PRIVATE_KEY.test(value) ? CENSOR : withoutUrlPasswords(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return walk(safeError(value), depth, seen);
  if (value instanceof Date) return value;
  if (ArrayBuffer.isView(value)) return `[${value.constructor.name} ${value.byteLength} bytes]`;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Object]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1, seen));
    if (value instanceof Map) return walk(Object.fromEntries(value), depth, seen);
    if (isHeaders(value)) return walk(Object.fromEntries(value.entries()), depth, seen);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] =
        isSecretLogKey(k) && v !== undefined && v !== null && v !== '' ? CENSOR : walk(v, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** A redacted copy of a log call's object (or child bindings). */
export function redactDeep<T>(value: T): T {
  return walk(value, 0, new WeakSet()) as T;
}
