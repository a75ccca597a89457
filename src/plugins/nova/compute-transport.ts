// The Nova compute transport: the endpoint and microversion negotiated once, every call
// authenticated through the Keystone session (one re-auth on 401), pages followed. The typed
// calls themselves live in compute.ts.
import type { Http, HttpResponse } from './http.ts';
import type { KeystoneSession } from './keystone.ts';
import { negotiate, versionRoot } from './microversion.ts';

export interface ComputeOptions {
  http: Http;
  session: KeystoneSession;
  /** Config cap (nova.maxMicroversion). */
  maxMicroversion?: string | undefined;
}

export interface CallOptions {
  json?: unknown;
  searchParams?: Record<string, string | number>;
  signal?: AbortSignal | undefined;
}

interface VersionDoc {
  version?: { id?: string; version?: string; min_version?: string };
  versions?: { id?: string; version?: string; status?: string }[];
}

interface Link {
  rel?: string;
  href?: string;
}

export class ComputeTransport {
  readonly #http: Http;
  readonly #session: KeystoneSession;
  readonly #cap: string | undefined;
  #endpoint: string | undefined;
  #minor: number | undefined;

  constructor(opts: ComputeOptions) {
    this.#http = opts.http;
    this.#session = opts.session;
    this.#cap = opts.maxMicroversion;
  }

  /** Finds the endpoint and negotiates the microversion (once). */
  async init(signal?: AbortSignal): Promise<{ endpoint: string; microversion: string }> {
    if (this.#endpoint === undefined || this.#minor === undefined) {
      const endpoint = (await this.#session.endpoint('compute', signal)).replace(/\/+$/, '');
      const serverMax = await this.#serverMax(endpoint, signal);
      this.#minor = negotiate(serverMax, this.#cap);
      this.#endpoint = endpoint;
    }
    return { endpoint: this.#endpoint, microversion: this.microversion };
  }

  /** Signs in unless the session holds a valid token: at most one request. */
  async authenticate(signal?: AbortSignal): Promise<void> {
    await this.#session.token(signal);
  }

  get microversion(): string {
    return `2.${this.#minor ?? 1}`;
  }

  /** True when the negotiated microversion is at least 2.minor. */
  atLeast(minor: number): boolean {
    return (this.#minor ?? 1) >= minor;
  }

  // The version document needs no token; ".../v2.1/<project>" would ask for one, so use the root.
  async #serverMax(endpoint: string, signal?: AbortSignal): Promise<string | undefined> {
    const res = await this.#http.request<VersionDoc>({
      api: 'nova',
      method: 'GET',
      url: versionRoot(endpoint),
      signal,
    });
    const doc = res.body;
    if (doc?.version) return doc.version.version || undefined;
    const v21 = doc?.versions?.find((v) => v.id === 'v2.1');
    return v21?.version || undefined;
  }

  protected async call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, opts: CallOptions = {}) {
    await this.init(opts.signal);
    const url = `${this.#endpoint}${path}`;
    return this.#session.withAuth(
      (token): Promise<HttpResponse<T>> =>
        this.#http.request<T>({
          api: 'nova',
          method,
          url,
          headers: {
            'x-auth-token': token,
            'openstack-api-version': `compute ${this.microversion}`,
            'x-openstack-nova-api-version': this.microversion,
          },
          ...(opts.json !== undefined ? { json: opts.json } : {}),
          ...(opts.searchParams ? { searchParams: opts.searchParams } : {}),
          signal: opts.signal,
        }),
      opts.signal,
    );
  }

  /** The id of the user drainer signs in as (the action log's user_id of drainer's calls), when Keystone says. */
  userId(signal?: AbortSignal): Promise<string | undefined> {
    return this.#session.userId(signal);
  }

  // The next link can name another endpoint (public vs internal): keep our endpoint and our
  // filters, take only its marker and limit.
  protected async paged<T>(
    path: string,
    key: string,
    filters: Record<string, string | number>,
    signal?: AbortSignal,
    onPage?: (res: HttpResponse<Record<string, unknown>>) => void,
  ): Promise<T[]> {
    const items: T[] = [];
    let page: Record<string, string> = {};
    for (let i = 0; i < 10_000; i++) {
      const res = await this.call<Record<string, unknown>>('GET', path, {
        searchParams: { ...filters, ...page },
        signal,
      });
      onPage?.(res);
      const body = res.body ?? {};
      items.push(...((body[key] as T[] | undefined) ?? []));
      const next = ((body[`${key}_links`] as Link[] | undefined) ?? []).find((l) => l.rel === 'next');
      if (!next?.href) return items;
      const q = new URL(next.href, 'http://x').searchParams;
      const marker = q.get('marker');
      if (!marker || marker === page.marker) return items;
      page = { marker, ...(q.get('limit') ? { limit: q.get('limit')! } : {}) };
    }
    return items;
  }

  /** Answers the request id Nova gave the call (its action log names the action by it), if it said. */
  protected async action(id: string, body: unknown, signal?: AbortSignal): Promise<string | undefined> {
    const res = await this.call('POST', `/servers/${encodeURIComponent(id)}/action`, { json: body, signal });
    const rid = res.headers['x-openstack-request-id'] ?? res.headers['x-compute-request-id'];
    return (Array.isArray(rid) ? rid[0] : rid) || undefined;
  }
}

/** Nova's clock as an answer's Date header shows it (whole seconds), or undefined. */
export function dateOf(res: HttpResponse): number | undefined {
  const date = Date.parse(String(res.headers.date ?? ''));
  return Number.isNaN(date) ? undefined : date;
}
