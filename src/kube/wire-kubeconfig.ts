// The wire for a kubeconfig (out of cluster, exec plugins, OIDC): client-node's KubeConfig adds the
// credentials and TLS settings, its fetch (undici) carries the request. Only this file and client.ts
// load client-node, and only on the kubeconfig path.
import { IsomorphicFetchHttpLibrary, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '../errors.ts';
import type { KubeWire, WireRequest, WireResponse } from './http.ts';

/** undici's Dispatcher, as client-node hands it out (undici itself is client-node's dependency, not ours). */
type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

export class KubeconfigWire implements KubeWire {
  readonly #kc: KubeConfig;
  readonly #server: string;
  readonly #lib = new IsomorphicFetchHttpLibrary();
  /** The connection pool every request of this wire shares (see #shareDispatcher). */
  #dispatcher: Dispatcher | undefined;

  constructor(kc: KubeConfig) {
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new ConfigError([{ path: 'kubeconfig', message: 'no current cluster' }]);
    this.#kc = kc;
    this.#server = server.replace(/\/+$/, '');
  }

  get server(): string {
    return this.#server;
  }

  /**
   * client-node builds a new undici Agent (its own connection pool) for every request whose cluster has
   * TLS settings, so each request would open a connection and, on a real cluster, do a TLS handshake.
   * The Agent's options come only from the kubeconfig's cluster, which is fixed for this wire: keep
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

  async send(req: WireRequest): Promise<WireResponse> {
    const ctx = new RequestContext(this.#server + req.pathAndQuery, req.method);
    for (const [k, v] of Object.entries(req.headers)) ctx.setHeaderParam(k, v);
    if (req.body !== undefined) ctx.setBody(req.body);
    if (req.signal) ctx.setSignal(req.signal);
    try {
      await this.#kc.applySecurityAuthentication(ctx);
    } catch (err) {
      // kubeconfig trouble (http without insecure-skip-tls-verify, unreadable CA, failing exec plugin)
      const why = err instanceof Error ? err.message : String(err);
      throw new ConfigError([{ path: 'kubeconfig', message: why }], { cause: err });
    }
    this.#shareDispatcher(ctx);
    const res = await this.#lib.send(ctx).toPromise();
    return {
      status: res.httpStatusCode,
      date: res.headers.date,
      stream: () => res.body.stream(),
      text: () => res.body.text(),
    };
  }
}
