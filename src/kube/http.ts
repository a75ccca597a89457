// One raw JSON request to the API server: URL, timeout, JSON and Status handling, counting. The bytes
// travel over a KubeWire that adds the credentials and TLS: client-node's KubeConfig (wire-kubeconfig.ts)
// or the Pod's ServiceAccount (wire-pod.ts), so this file never loads client-node.
import { ApiError, ConfigError } from '../errors.ts';
import { connectionError, errorForStatus, parseStatus } from './errors.ts';
import type { KubeStatus } from './types.ts';
import { ServerClock } from './server-clock.ts';

/**
 * One request answered (or failed: code 'error'); `watch`: the path, when it opened a watch stream;
 * `request`: its method, path and query ("GET /api/v1/nodes?labelSelector=…"), for attributing it.
 */
export type ApiRequestHook = (
  api: 'keystone' | 'nova' | 'placement' | 'kubernetes',
  code: string,
  watch?: string,
  request?: string,
) => void;

export type HttpVerb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';

export interface KubeRequest {
  readonly method?: HttpVerb;
  /** API path, e.g. /api/v1/nodes/n1 (no query string). */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /** Per-request timeout; 0 disables it (watches). Default 30 s. */
  readonly timeoutMs?: number;
}

export interface RawResponse {
  readonly code: number;
  /** Parsed JSON (objects) or, for errors, a Status. */
  readonly body: unknown;
  readonly stream: ReadableStream<Uint8Array> | null;
}

/** What list/watch/patch code needs. */
export interface KubeTransport {
  request<T = unknown>(req: KubeRequest): Promise<T>;
  send(req: KubeRequest, opts?: { stream?: boolean }): Promise<RawResponse>;
  /** The API server's time now, as its answers' Date headers tell it; undefined before any answer. */
  serverNow?(): Date | undefined;
}

/** The Kubernetes clients every caller gets: raw JSON over one connection pool, counted. */
export type KubeClients = KubeTransport;

/** One HTTP exchange as a wire sees it: the path carries the query; the wire adds auth. */
export interface WireRequest {
  readonly method: HttpVerb;
  readonly pathAndQuery: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
}

export interface WireResponse {
  readonly status: number;
  /** The Date header: the API server's clock, in whole seconds. */
  readonly date?: string | undefined;
  stream(): ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
}

/**
 * Carries a request to the API server with credentials and TLS. Throws ConfigError for credential
 * trouble (unreadable token, failing exec plugin); anything else it throws means no answer came.
 */
export interface KubeWire {
  send(req: WireRequest): Promise<WireResponse>;
  /** The API server's address (http(s)://host:port), named when no answer came. */
  readonly server?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** How KubeHttp tells a person what it waits for (the CLI prints it; the daemon passes none). */
export interface KubeHttpOptions {
  /** Default per-request timeout (a request's own timeoutMs wins). */
  readonly timeoutMs?: number;
  /** Told once when a request has had no answer for `slowMs` (default 5 s). */
  readonly onSlow?: (text: string) => void;
  readonly slowMs?: number;
  /** The API server's clock, kept from the answers (tests bring their own monotonic time). */
  readonly clock?: ServerClock;
}

const span = (ms: number): string => (ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

function signalFor(req: KubeRequest, defaultTimeoutMs: number): AbortSignal | undefined {
  const timeout = req.timeoutMs ?? defaultTimeoutMs;
  const parts = [req.signal, timeout > 0 ? AbortSignal.timeout(timeout) : undefined].filter(
    (s): s is AbortSignal => s !== undefined,
  );
  return parts.length ? AbortSignal.any(parts) : undefined;
}

function pathAndQuery(req: KubeRequest): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) q.set(k, String(v));
  const qs = q.toString();
  return qs ? `${req.path}?${qs}` : req.path;
}

export class KubeHttp implements KubeClients {
  readonly #wire: KubeWire;
  readonly #onApiRequest: ApiRequestHook | undefined;

  readonly #opts: KubeHttpOptions;
  readonly #clock: ServerClock;

  constructor(wire: KubeWire, onApiRequest?: ApiRequestHook, opts: KubeHttpOptions = {}) {
    this.#wire = wire;
    this.#onApiRequest = onApiRequest;
    this.#opts = opts;
    this.#clock = opts.clock ?? new ServerClock();
  }

  serverNow(): Date | undefined {
    return this.#clock.now();
  }

  /** A timer that says what the request waits for, once it has waited `slowMs`; cleared by the caller. */
  #slowNotice(
    method: string,
    req: KubeRequest,
    timeoutMs: number,
  ): ReturnType<typeof setTimeout> | undefined {
    const { onSlow } = this.#opts;
    if (!onSlow || timeoutMs === 0) return undefined; // watches wait by design
    const slowMs = this.#opts.slowMs ?? 5000;
    const t = setTimeout(
      () =>
        onSlow(
          `waiting for kubernetes ${method} ${req.path}: no answer for ${span(slowMs)} (gives up after ${span(timeoutMs)})`,
        ),
      slowMs,
    );
    t.unref();
    return t;
  }

  count(code: string, watch?: string, request?: string): void {
    try {
      this.#onApiRequest?.('kubernetes', code, watch, request);
    } catch {
      // metrics never break a request
    }
  }

  /** Sends the request and returns any HTTP answer; throws only when no answer came. */
  async send(req: KubeRequest, opts: { stream?: boolean } = {}): Promise<RawResponse> {
    const method = req.method ?? 'GET';
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (req.body !== undefined) headers['Content-Type'] = req.contentType ?? 'application/json';
    const timeoutMs = req.timeoutMs ?? this.#opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const signal = signalFor(req, timeoutMs);
    const slow = this.#slowNotice(method, req, timeoutMs);
    let res: WireResponse;
    const sent = this.#clock.mark();
    try {
      res = await this.#wire.send({
        method,
        pathAndQuery: pathAndQuery(req),
        headers,
        ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      this.count('error', opts.stream ? req.path : undefined, `${method} ${pathAndQuery(req)}`);
      if (req.signal?.aborted) throw req.signal.reason;
      throw connectionError(err, method, req.path, timeoutMs, this.#wire.server);
    } finally {
      clearTimeout(slow);
    }
    this.#clock.observe(res.date, sent, this.#clock.mark());
    const code = res.status;
    this.count(String(code), opts.stream ? req.path : undefined, `${method} ${pathAndQuery(req)}`);
    if (opts.stream && code === 200) return { code: 200, body: undefined, stream: res.stream() };
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason;
      throw connectionError(err, method, req.path, undefined, this.#wire.server);
    }
    if (code >= 400) return { code, body: parseStatus(code, text), stream: null };
    try {
      return { code, body: text ? (JSON.parse(text) as unknown) : undefined, stream: null };
    } catch (err) {
      const details = { api: 'kubernetes', status: code, method, url: req.path };
      throw new ApiError(
        'API',
        `kubernetes ${method} ${req.path}: ${code} with a body that is not JSON`,
        details,
        {
          cause: err,
        },
      );
    }
  }

  /** Sends the request; answers ≥ 400 become typed errors. */
  async request<T = unknown>(req: KubeRequest): Promise<T> {
    const res = await this.send(req);
    if (res.code >= 400)
      throw errorForStatus(res.code, res.body as KubeStatus, req.method ?? 'GET', req.path);
    return res.body as T;
  }
}
