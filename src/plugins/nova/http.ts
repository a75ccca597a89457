// One small HTTP layer for Keystone and Nova: node:http(s) without keep-alive (uwsgi answers
// `Connection: close`), our retry loop with an injected sleep, and every non-2xx answer turned into
// a typed error. Messages carry only safe facts: never headers, request bodies or tokens. (Not got:
// it alone added ~14 MB RSS and ~100 ms start to an agent that runs on every hypervisor.)
import { readFileSync } from 'node:fs';
import type { AgentOptions } from 'node:https';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ApiError,
  AuthError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  OutcomeUnknownError,
  TransientError,
  type ApiErrorDetails,
} from '../../errors.ts';
import { bodyLength, http, https } from '../../node-http.ts';
import { noAnswerText } from '../../no-answer.ts';

export type Api = 'keystone' | 'nova' | 'placement';
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;
export type ApiRequestHook = (api: Api | 'kubernetes', code: string) => void;

export const defaultSleep: Sleep = (ms, signal) => delay(ms, undefined, signal ? { signal } : {});

export interface TlsOptions {
  cacert?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  insecure?: boolean | undefined;
}

export interface HttpOptions {
  /** Per-request timeout in milliseconds. */
  timeoutMs: number;
  tls?: TlsOptions;
  sleep?: Sleep;
  onApiRequest?: ApiRequestHook | undefined;
  /** Retries of connection errors and 502/503/504 (default 3). */
  retries?: number;
  /** First backoff, doubled each retry (default 500 ms). */
  backoffMs?: number;
  /** Told once per attempt that has had no answer for `slowMs` (default 5 s): what it waits for. */
  onSlow?: ((text: string) => void) | undefined;
  slowMs?: number;
}

export interface HttpRequest {
  api: Api;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  json?: unknown;
  searchParams?: Record<string, string | number>;
  signal?: AbortSignal | undefined;
  /**
   * Safe to send again after an answer that may have been lost (default: GET and PUT). A Nova
   * action (live-migrate, migrate, confirm, force-complete, abort) is not: after a timeout, a reset
   * or a 502/503/504 it may have been applied, so it fails with OutcomeUnknownError instead and
   * the caller reads back what happened.
   */
  idempotent?: boolean;
}

export interface HttpResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

export interface Http {
  request<T = unknown>(req: HttpRequest): Promise<HttpResponse<T>>;
}

const RETRY_STATUS = new Set([502, 503, 504]);
/** No connection was made, so nothing was sent: safe to retry whatever the request. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);
const RETRY_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
]);

function tlsSettings(tls: TlsOptions = {}): AgentOptions {
  return {
    rejectUnauthorized: !tls.insecure,
    ...(tls.cacert ? { ca: readFileSync(tls.cacert) } : {}),
    ...(tls.cert ? { cert: readFileSync(tls.cert) } : {}),
    ...(tls.key ? { key: readFileSync(tls.key) } : {}),
  };
}

/** A request that got no answer: the system's code (ECONNREFUSED …), ETIMEDOUT for our timeout. */
class NoAnswer extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

const codeOf = (err: unknown): string => {
  const c = (err as { code?: unknown } | undefined)?.code;
  return typeof c === 'string' ? c : 'ERROR';
};

const span = (ms: number): string => (ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

export function createHttp(opts: HttpOptions): Http {
  const sleep = opts.sleep ?? defaultSleep;
  const retries = opts.retries ?? 3;
  const backoffMs = opts.backoffMs ?? 500;
  // Fresh sockets each time: the services close them anyway, and reuse races that close.
  const agents = {
    'http:': new http.Agent({ keepAlive: false }),
    'https:': new https.Agent({ keepAlive: false, ...tlsSettings(opts.tls) }),
  };

  const slowMs = opts.slowMs ?? 5000;
  /** "waiting for keystone POST …: no answer for 5 s (gives up after 30 s; attempt 1 of 4)" */
  const slowText = (req: HttpRequest, attempt: number) =>
    `waiting for ${req.api} ${req.method} ${safeUrl(req.url)}: no answer for ${span(slowMs)} ` +
    `(gives up after ${span(opts.timeoutMs)}; attempt ${attempt + 1} of ${retries + 1})`;

  function once(req: HttpRequest, attempt: number): Promise<HttpResponse> {
    const url = new URL(req.url);
    if (req.searchParams)
      url.search = new URLSearchParams(
        Object.entries(req.searchParams).map(([k, v]): [string, string] => [k, String(v)]),
      ).toString();
    const body = req.json !== undefined ? JSON.stringify(req.json) : undefined;
    const headers: Record<string, string> = {
      'user-agent': 'drainer',
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...req.headers,
      ...bodyLength(body),
    };
    const agent = url.protocol === 'https:' ? agents['https:'] : agents['http:'];
    const send = url.protocol === 'https:' ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const r = send(
        url,
        { method: req.method, headers, agent, ...(req.signal ? { signal: req.signal } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.once('error', fail);
          res.once('end', () => {
            clearTimeout(timer);
            clearTimeout(slow);
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseBody(text) });
          });
        },
      );
      function fail(err: unknown) {
        clearTimeout(timer);
        clearTimeout(slow);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
      const timer = setTimeout(
        () => r.destroy(new NoAnswer(`no answer within ${opts.timeoutMs} ms`, 'ETIMEDOUT')),
        opts.timeoutMs,
      );
      const slow = setTimeout(() => opts.onSlow?.(slowText(req, attempt)), slowMs);
      slow.unref();
      r.once('response', () => clearTimeout(slow));
      r.once('error', fail);
      r.end(body);
    });
  }

  return {
    async request<T>(req: HttpRequest): Promise<HttpResponse<T>> {
      const idempotent = req.idempotent ?? (req.method === 'GET' || req.method === 'PUT');
      for (let attempt = 0; ; attempt++) {
        const last = attempt >= retries;
        let res: HttpResponse;
        try {
          res = await once(req, attempt);
        } catch (err) {
          if (req.signal?.aborted) throw req.signal.reason;
          const code = codeOf(err);
          opts.onApiRequest?.(req.api, code);
          if (!idempotent && RETRY_CODES.has(code) && !NOT_SENT_CODES.has(code))
            throw outcomeUnknown(req, code);
          if (last || !RETRY_CODES.has(code)) throw connectionError(req, code, opts.timeoutMs);
          await sleep(backoffMs * 2 ** attempt, req.signal);
          continue;
        }
        opts.onApiRequest?.(req.api, String(res.status));
        if (res.status < 400) return res as HttpResponse<T>;
        if (!idempotent && RETRY_STATUS.has(res.status))
          throw outcomeUnknown(req, `→ ${res.status}`, res.status);
        if (!last && RETRY_STATUS.has(res.status)) {
          await sleep(backoffMs * 2 ** attempt, req.signal);
          continue;
        }
        throw errorFromResponse(req, res);
      }
    },
  };
}

function parseBody(text: unknown): unknown {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Path only: query strings and fragments stay out of errors and logs. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid url)';
  }
}

function header(res: HttpResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Nova: {"badRequest": {"message", "code"}}; Keystone: {"error": {"message", "code", "title"}}. */
export function faultMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim().slice(0, 300) || undefined;
  if (!body || typeof body !== 'object') return undefined;
  // Placement: {"errors": [{"status", "title", "detail", "code"}]}
  const errors = (body as { errors?: { detail?: unknown; title?: unknown }[] }).errors;
  const first = Array.isArray(errors) ? errors[0] : undefined;
  if (first) {
    const text = typeof first.detail === 'string' ? first.detail : first.title;
    if (typeof text === 'string') return text.replace(/\s+/g, ' ').trim().slice(0, 300);
  }
  for (const v of Object.values(body as Record<string, unknown>)) {
    if (v && typeof v === 'object' && typeof (v as { message?: unknown }).message === 'string') {
      return (v as { message: string }).message;
    }
  }
  return undefined;
}

/** A non-idempotent request whose answer was lost: it may or may not have been applied. */
function outcomeUnknown(req: HttpRequest, what: string, status?: number): OutcomeUnknownError {
  const details: ApiErrorDetails = {
    api: req.api,
    method: req.method,
    url: safeUrl(req.url),
    ...(status !== undefined ? { status } : {}),
  };
  return new OutcomeUnknownError(
    `${req.api} ${req.method} ${new URL(req.url).pathname} ${what}: the answer was lost and it may have been applied; not sent again`,
    details,
  );
}

function connectionError(req: HttpRequest, code: string, timeoutMs?: number): ApiError {
  const details: ApiErrorDetails = { api: req.api, method: req.method, url: safeUrl(req.url) };
  // the system's code in plain words (no-answer.ts); the error itself is never the cause, so
  // nothing of the request (headers with tokens, bodies with passwords) can travel along.
  const words = noAnswerText(code, {
    setting: 'openstack.auth.authUrl (the catalog gives the rest)',
    caSetting: 'openstack.cacert',
    ...(timeoutMs ? { timeoutMs } : {}),
  });
  const msg = `${req.api} ${req.method} ${details.url}: ${words}`;
  return RETRY_CODES.has(code) ? new TransientError(msg, details) : new ApiError('API', msg, details);
}

function errorFromResponse(req: HttpRequest, res: HttpResponse): ApiError {
  const requestId = header(res, 'x-openstack-request-id') ?? header(res, 'x-compute-request-id');
  const fault = faultMessage(res.body);
  const details: ApiErrorDetails = {
    api: req.api,
    status: res.status,
    method: req.method,
    url: safeUrl(req.url),
    ...(requestId ? { requestId } : {}),
    ...(fault ? { fault } : {}),
  };
  const where = `${req.api} ${req.method} ${new URL(req.url).pathname} → ${res.status}`;
  const tail = `${fault ? `: ${fault}` : ''}${requestId ? ` (request ${requestId})` : ''}`;
  switch (res.status) {
    case 401:
      return new AuthError(`${where}: credentials rejected${tail}`, details);
    case 403:
      return new ForbiddenError(
        `${where}: admin rights needed (drainer must run with an OpenStack admin role)${tail}`,
        details,
      );
    case 404:
      return new NotFoundError(`${where}${tail}`, details);
    case 409:
      return new ConflictError(`${where}${tail}`, details);
    case 429:
    case 502:
    case 503:
    case 504:
      return new TransientError(`${where}${tail}`, details);
    default:
      return new ApiError('API', `${where}${tail}`, details);
  }
}
