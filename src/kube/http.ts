// One raw JSON request to the API server through the KubeConfig's auth and TLS settings.
// client-node's fetch (undici) carries it; every answer and every failure is counted.
import { IsomorphicFetchHttpLibrary, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { ApiError, ConfigError } from '../core/errors.ts';
import { connectionError, errorForStatus, parseStatus } from './errors.ts';
import type { KubeStatus } from './types.ts';

/** undici's Dispatcher, as client-node hands it out (undici itself is client-node's dependency, not ours). */
type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

export type ApiRequestHook = (api: 'keystone' | 'nova' | 'placement' | 'kubernetes', code: string) => void;

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

/** What list/watch/patch code needs: KubeClients and KubeHttp both provide it. */
export interface KubeTransport {
  request<T = unknown>(req: KubeRequest): Promise<T>;
  send(req: KubeRequest, opts?: { stream?: boolean }): Promise<RawResponse>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

function buildUrl(kc: KubeConfig, req: KubeRequest): string {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  const url = new URL(server.replace(/\/+$/, '') + req.path);
  for (const [k, v] of Object.entries(req.query ?? {}))
    if (v !== undefined) url.searchParams.set(k, String(v));
  return url.toString();
}

function signalFor(req: KubeRequest): AbortSignal | undefined {
  const timeout = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const parts = [req.signal, timeout > 0 ? AbortSignal.timeout(timeout) : undefined].filter(
    (s): s is AbortSignal => s !== undefined,
  );
  return parts.length ? AbortSignal.any(parts) : undefined;
}

export class KubeHttp implements KubeTransport {
  readonly kc: KubeConfig;
  readonly #lib = new IsomorphicFetchHttpLibrary();
  readonly #onApiRequest: ApiRequestHook | undefined;
  /** The connection pool every request of this client shares (see send). */
  #dispatcher: Dispatcher | undefined;

  constructor(kc: KubeConfig, onApiRequest?: ApiRequestHook) {
    this.kc = kc;
    this.#onApiRequest = onApiRequest;
  }

  count(code: string): void {
    try {
      this.#onApiRequest?.('kubernetes', code);
    } catch {
      // metrics never break a request
    }
  }

  /**
   * client-node builds a new undici Agent (its own connection pool) for every request whose cluster has
   * TLS settings, so each request would open a connection and, on a real cluster, do a TLS handshake.
   * The Agent's options come only from the kubeconfig's cluster, which is fixed for this client: keep
   * the first one and let every request use it.
   */
  #shareDispatcher(ctx: RequestContext): void {
    const fresh = ctx.getDispatcher();
    if (!fresh) return;
    this.#dispatcher ??= fresh;
    if (fresh !== this.#dispatcher) {
      ctx.setDispatcher(this.#dispatcher);
      fresh.close().catch(() => undefined); // never used: holds no connection
    }
  }

  /** Sends the request and returns any HTTP answer; throws only when no answer came. */
  async send(req: KubeRequest, opts: { stream?: boolean } = {}): Promise<RawResponse> {
    const method = req.method ?? 'GET';
    const ctx = new RequestContext(buildUrl(this.kc, req), method);
    ctx.setHeaderParam('Accept', 'application/json');
    if (req.body !== undefined) {
      ctx.setHeaderParam('Content-Type', req.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(req.body));
    }
    const signal = signalFor(req);
    if (signal) ctx.setSignal(signal);
    try {
      await this.kc.applySecurityAuthentication(ctx);
    } catch (err) {
      // kubeconfig trouble (http without insecure-skip-tls-verify, unreadable CA, failing exec plugin)
      const why = err instanceof Error ? err.message : String(err);
      throw new ConfigError([{ path: 'kubeconfig', message: why }], { cause: err });
    }
    this.#shareDispatcher(ctx);
    let res;
    try {
      res = await this.#lib.send(ctx).toPromise();
    } catch (err) {
      this.count('error');
      if (req.signal?.aborted) throw req.signal.reason;
      throw connectionError(err, method, req.path);
    }
    this.count(String(res.httpStatusCode));
    if (opts.stream && res.httpStatusCode === 200)
      return { code: 200, body: undefined, stream: res.body.stream() };
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason;
      throw connectionError(err, method, req.path);
    }
    const code = res.httpStatusCode;
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
