// Keystone v3: password (project-scoped) or application-credential (never scoped) auth,
// the compute endpoint from the catalog, a cached token renewed before it expires, and
// one re-auth when Nova answers 401 to a token we believed valid.
import { AuthError, ConfigError, isAuthError } from '../../errors.ts';
import type { OpenStackConfig } from '../../config/schema.ts';
import type { Http } from './http.ts';

interface CatalogEndpoint {
  interface?: string;
  region_id?: string | null;
  region?: string | null;
  url?: string;
}
interface CatalogEntry {
  type?: string;
  name?: string;
  endpoints?: CatalogEndpoint[];
}
interface TokenBody {
  token?: { expires_at?: string; issued_at?: string; catalog?: CatalogEntry[]; user?: { id?: string } };
}

interface Token {
  value: string;
  expiresAt: number;
  renewAt: number;
  catalog: CatalogEntry[];
  /** The user the token was issued to (Nova's action log names who asked for each action by it). */
  userId: string | undefined;
}

export interface KeystoneOptions {
  openstack: OpenStackConfig;
  http: Http;
  now?: () => number;
}

/** Renew this long before expiry: 5 minutes, or half the lifetime of short-lived tokens. */
const RENEW_MARGIN_MS = 300_000;

export function identityBase(authUrl: string): string {
  const trimmed = authUrl.replace(/\/+$/, '');
  return /\/v3$/.test(trimmed) ? trimmed : `${trimmed}/v3`;
}

function domain(id: string | undefined, name: string | undefined) {
  if (id) return { id };
  if (name) return { name };
  return undefined;
}

/** The body of POST /v3/auth/tokens. Throws ConfigError when the credentials are incomplete. */
export function authBody(os: OpenStackConfig): unknown {
  const a = os.auth;
  if (a.applicationCredentialSecret && (a.applicationCredentialId || a.applicationCredentialName)) {
    const user = a.userId
      ? { id: a.userId }
      : { name: a.username, domain: domain(a.userDomainId, a.userDomainName) };
    const credential = a.applicationCredentialId
      ? { id: a.applicationCredentialId, secret: a.applicationCredentialSecret }
      : { name: a.applicationCredentialName, secret: a.applicationCredentialSecret, user };
    // An application credential carries its project: a scope in the request is an error.
    return {
      auth: {
        identity: { methods: ['application_credential'], application_credential: credential },
      },
    };
  }
  const issues: { path: string; message: string }[] = [];
  if (!a.userId && !a.username) issues.push({ path: 'openstack.auth.username', message: 'required' });
  if (a.password === undefined) issues.push({ path: 'openstack.auth.password', message: 'required' });
  if (!a.projectId && !a.projectName) {
    issues.push({ path: 'openstack.auth.projectName', message: 'required (or projectId)' });
  }
  if (issues.length) throw new ConfigError(issues);
  const user = a.userId
    ? { id: a.userId, password: a.password }
    : {
        name: a.username,
        domain: domain(a.userDomainId, a.userDomainName) ?? { id: 'default' },
        password: a.password,
      };
  const project = a.projectId
    ? { id: a.projectId }
    : {
        name: a.projectName,
        domain: domain(a.projectDomainId, a.projectDomainName) ??
          domain(a.userDomainId, a.userDomainName) ?? { id: 'default' },
      };
  return {
    auth: { identity: { methods: ['password'], password: { user } }, scope: { project } },
  };
}

/** The one URL of `type` in the catalog for the configured interface and region. */
export function findEndpoint(
  catalog: readonly CatalogEntry[],
  type: string,
  iface: string,
  region: string | undefined,
): string {
  const entries = catalog.filter((c) => c.type === type);
  if (entries.length === 0) {
    throw new ConfigError([
      { path: 'openstack.auth', message: `the Keystone catalog has no "${type}" service` },
    ]);
  }
  const all = entries.flatMap((e) => e.endpoints ?? []);
  const regionOf = (e: CatalogEndpoint) => e.region_id ?? e.region ?? '';
  const fit = all.filter(
    (e) => e.url && (e.interface ?? '').replace(/URL$/, '') === iface && (!region || regionOf(e) === region),
  );
  const urls = [...new Set(fit.map((e) => e.url!.replace(/\/+$/, '')))];
  const offered = all.map((e) => `${e.interface ?? '?'}@${regionOf(e) || '?'}`).join(', ');
  if (urls.length === 0) {
    throw new ConfigError([
      {
        path: region ? 'openstack.regionName' : 'openstack.interface',
        message: `no "${type}" endpoint with interface "${iface}"${region ? ` in region "${region}"` : ''} (catalog offers: ${offered})`,
      },
    ]);
  }
  if (urls.length > 1) {
    throw new ConfigError([
      {
        path: 'openstack.regionName',
        message: `${urls.length} "${type}" endpoints match interface "${iface}"${region ? ` in region "${region}"` : ''}; set openstack.regionName (catalog offers: ${offered})`,
      },
    ]);
  }
  return urls[0]!;
}

export class KeystoneSession {
  readonly #os: OpenStackConfig;
  readonly #http: Http;
  readonly #now: () => number;
  #token: Token | undefined;
  #pending: Promise<Token> | undefined;

  constructor(opts: KeystoneOptions) {
    this.#os = opts.openstack;
    this.#http = opts.http;
    this.#now = opts.now ?? Date.now;
  }

  /** A valid token, authenticating when there is none or it is close to expiry. */
  async token(signal?: AbortSignal): Promise<string> {
    return (await this.#current(signal)).value;
  }

  /** The compute endpoint (as the catalog has it) for the configured interface and region. */
  async endpoint(type = 'compute', signal?: AbortSignal): Promise<string> {
    const t = await this.#current(signal);
    return findEndpoint(t.catalog, type, this.#os.interface, this.#os.regionName);
  }

  /** Does the catalog list a service of this type at all (e.g. "placement" in very old clouds)? */
  async hasService(type: string, signal?: AbortSignal): Promise<boolean> {
    return (await this.#current(signal)).catalog.some((c) => c.type === type);
  }

  /** The id of the user drainer signs in as, when Keystone says. */
  async userId(signal?: AbortSignal): Promise<string | undefined> {
    return (await this.#current(signal)).userId;
  }

  /** Forget the token (Nova said 401): the next call authenticates again. */
  invalidate(): void {
    this.#token = undefined;
  }

  /** Runs fn with a token; a 401 costs one re-auth and one retry, a second 401 is an AuthError. */
  async withAuth<T>(fn: (token: string) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const first = await this.token(signal);
    try {
      return await fn(first);
    } catch (err) {
      if (!(isAuthError(err) && err.status === 401)) throw err;
      if (this.#token?.value === first) this.invalidate();
    }
    const second = await this.token(signal);
    try {
      return await fn(second);
    } catch (err) {
      if (isAuthError(err) && err.status === 401) {
        throw new AuthError(
          `${err.details.api} rejected a freshly issued token (check the user's role assignments)`,
          err.details,
        );
      }
      throw err;
    }
  }

  async #current(signal?: AbortSignal): Promise<Token> {
    const t = this.#token;
    if (t && this.#now() < t.renewAt) return t;
    // One authentication at a time; concurrent callers share it.
    this.#pending ??= this.#authenticate(signal).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #authenticate(signal?: AbortSignal): Promise<Token> {
    if (!this.#os.auth.authUrl) {
      throw new ConfigError([{ path: 'openstack.auth.authUrl', message: 'required' }]);
    }
    const url = `${identityBase(this.#os.auth.authUrl)}/auth/tokens`;
    const res = await this.#http.request<TokenBody>({
      api: 'keystone',
      method: 'POST',
      url,
      json: authBody(this.#os),
      signal,
      idempotent: true, // a second token is harmless
    });
    const header = res.headers['x-subject-token'];
    const value = Array.isArray(header) ? header[0] : header;
    if (!value) {
      throw new AuthError('Keystone answered without an X-Subject-Token header', {
        api: 'keystone',
        status: res.status,
        method: 'POST',
        url,
      });
    }
    const now = this.#now();
    const expiresAt = Date.parse(res.body?.token?.expires_at ?? '') || now + 3_600_000;
    const issuedAt = Date.parse(res.body?.token?.issued_at ?? '') || now;
    const margin = Math.min(RENEW_MARGIN_MS, Math.max(0, expiresAt - issuedAt) / 2);
    const token: Token = {
      value,
      expiresAt,
      renewAt: expiresAt - margin,
      catalog: res.body?.token?.catalog ?? [],
      userId: res.body?.token?.user?.id,
    };
    this.#token = token;
    return token;
  }
}
