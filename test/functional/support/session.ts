// A small Keystone-authenticated HTTP session for the harness (got). It never throws on HTTP status:
// tests assert on the real API's status codes, so callers check them (see `expectStatus`).
import { Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import got, { type Got, type Method } from 'got';
import type { CloudAuth, CloudEnv } from './cloud-env.ts';

export type ServiceType = 'compute' | 'identity' | 'image' | 'placement';

/** API bodies are what the tests assert on, so they stay loosely typed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Body = any;

export interface ApiResponse<T = Body> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

export interface RequestOptions {
  json?: unknown;
  microversion?: string;
  searchParams?: Record<string, string | number>;
  headers?: Record<string, string>;
}

interface CatalogEntry {
  type: string;
  endpoints: { interface: string; region_id?: string; region?: string; url: string }[];
}

/** uwsgi answers `Connection: close`; a fresh socket per request avoids racing a closing one. */
export const http: Got = got.extend({
  throwHttpErrors: false,
  responseType: 'text',
  agent: { http: new Agent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false }) },
  timeout: { request: 90_000 },
  retry: { limit: 3, methods: ['GET', 'PUT', 'DELETE', 'HEAD'], statusCodes: [502, 503, 504] },
});

export function identityUrl(authUrl: string): string {
  const u = authUrl.replace(/\/+$/, '');
  return /\/v3$/.test(u) ? u : `${u}/v3`;
}

/** The Keystone v3 auth body for these credentials, optionally scoped to a project id. */
export function authBody(auth: CloudAuth, scopeProjectId?: string): unknown {
  if (auth.applicationCredentialId) {
    return {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: {
            id: auth.applicationCredentialId,
            secret: auth.applicationCredentialSecret,
          },
        },
      },
    };
  }
  const domain = (id?: string, name?: string) => (id ? { id } : { name: name ?? 'Default' });
  const user = auth.userId
    ? { id: auth.userId, password: auth.password }
    : {
        name: auth.username,
        domain: domain(auth.userDomainId, auth.userDomainName),
        password: auth.password,
      };
  const project = scopeProjectId
    ? { id: scopeProjectId }
    : auth.projectId
      ? { id: auth.projectId }
      : { name: auth.projectName, domain: domain(auth.projectDomainId, auth.projectDomainName) };
  return { auth: { identity: { methods: ['password'], password: { user } }, scope: { project } } };
}

export class Session {
  readonly cloud: CloudEnv;
  readonly scopeProjectId: string | undefined;
  token = '';
  userId = '';
  projectId = '';
  projectDomainId = '';
  roles: string[] = [];
  private catalog: CatalogEntry[] = [];

  private constructor(cloud: CloudEnv, scopeProjectId?: string) {
    this.cloud = cloud;
    this.scopeProjectId = scopeProjectId;
  }

  static async open(cloud: CloudEnv, scopeProjectId?: string): Promise<Session> {
    const s = new Session(cloud, scopeProjectId);
    await s.authenticate();
    return s;
  }

  async authenticate(): Promise<void> {
    const res = await http.post(`${identityUrl(this.cloud.auth.authUrl)}/auth/tokens`, {
      json: authBody(this.cloud.auth, this.scopeProjectId),
    });
    if (res.statusCode !== 201) {
      throw new Error(`Keystone auth (${this.cloud.source}) answered ${res.statusCode}`);
    }
    const token = JSON.parse(res.body).token;
    this.token = String(res.headers['x-subject-token']);
    this.userId = token.user.id;
    this.projectId = token.project?.id ?? '';
    this.projectDomainId = token.project?.domain?.id ?? '';
    this.roles = (token.roles ?? []).map((r: { name: string }) => r.name);
    this.catalog = token.catalog ?? [];
  }

  endpoint(type: ServiceType): string {
    if (type === 'identity') return identityUrl(this.cloud.auth.authUrl);
    const entry = this.catalog.find((c) => c.type === type);
    const ep = entry?.endpoints.find(
      (e) =>
        e.interface === this.cloud.interface &&
        (!this.cloud.regionName || (e.region_id ?? e.region) === this.cloud.regionName),
    );
    if (!ep) throw new Error(`no ${type} endpoint (${this.cloud.interface}) in the catalog`);
    return ep.url.replace(/\/+$/, '');
  }

  /** One request; re-authenticates once on 401 (tokens may expire during a long suite). */
  async request<T = Body>(
    service: ServiceType,
    method: Method,
    path: string,
    opts: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    let res = await this.send<T>(service, method, path, opts);
    if (res.status === 401) {
      await this.authenticate();
      res = await this.send<T>(service, method, path, opts);
    }
    return res;
  }

  private async send<T>(
    service: ServiceType,
    method: Method,
    path: string,
    opts: RequestOptions,
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { 'X-Auth-Token': this.token, ...opts.headers };
    if (opts.microversion)
      headers['OpenStack-API-Version'] =
        `${service === 'placement' ? 'placement' : 'compute'} ${opts.microversion}`;
    const res = await http(`${this.endpoint(service)}${path}`, {
      method,
      headers,
      ...(opts.json === undefined ? {} : { json: opts.json }),
      ...(opts.searchParams ? { searchParams: opts.searchParams } : {}),
    });
    const text = res.body;
    return { status: res.statusCode, body: (text ? safeJson(text) : undefined) as T, headers: res.headers };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Throws a readable error (method, path, status, body excerpt) unless the status is one of `ok`. */
export function expectStatus<T>(res: ApiResponse<T>, what: string, ...ok: number[]): ApiResponse<T> {
  if (!ok.includes(res.status)) {
    const body = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
    throw new Error(`${what}: HTTP ${res.status} (expected ${ok.join('/')}): ${body?.slice(0, 400)}`);
  }
  return res;
}
