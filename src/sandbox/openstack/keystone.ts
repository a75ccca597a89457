// Keystone v3 over HTTP: password and application-credential authentication, token
// validation/revocation, application-credential creation, the service catalog.
import type { IncomingHttpHeaders } from 'node:http';
import type { Identity, Project, StoredAppCredential, TokenInfo, User } from './identity.ts';
import { DOMAIN } from './identity.ts';
import { HttpFault, isObject, requestId } from './http.ts';
import type { Reply } from './http.ts';
import { hexId, keystoneTime } from './ids.ts';

export interface KeystoneOptions {
  identity: Identity;
  identityUrl: string;
  computeUrl: string;
  /** Listed in the catalog as type "placement" when given (a very old cloud has none). */
  placementUrl?: string;
  region: string;
}

interface Endpoint {
  id: string;
  interface: string;
  region_id: string;
  url: string;
  region: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
};

function fault(status: number, message: string, headers: Record<string, string> = {}): HttpFault {
  return new HttpFault({
    status,
    headers,
    body: { error: { code: status, message, title: TITLES[status] ?? 'Error' } },
  });
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (isObject(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export class Keystone {
  readonly #o: KeystoneOptions;
  readonly #catalog: unknown[];

  constructor(opts: KeystoneOptions) {
    this.#o = opts;
    const endpoints = (url: string): Endpoint[] =>
      ['public', 'internal', 'admin'].map((iface) => ({
        id: hexId(),
        interface: iface,
        region_id: opts.region,
        url,
        region: opts.region,
      }));
    this.#catalog = [
      { endpoints: endpoints(`${opts.identityUrl}/`), id: hexId(), type: 'identity', name: 'keystone' },
      { endpoints: endpoints(opts.computeUrl), id: hexId(), type: 'compute', name: 'nova' },
      ...(opts.placementUrl
        ? [{ endpoints: endpoints(opts.placementUrl), id: hexId(), type: 'placement', name: 'placement' }]
        : []),
    ];
  }

  #unauthorized(): HttpFault {
    return fault(401, 'The request you have made requires authentication.', {
      'WWW-Authenticate': `Keystone uri="${this.#o.identityUrl}"`,
    });
  }

  handle(method: string, path: string, headers: IncomingHttpHeaders, body: unknown): Reply {
    const base = { 'x-openstack-request-id': requestId(), Vary: 'X-Auth-Token' };
    try {
      // Keystone writes its successes as Python's json.dumps and its errors compactly.
      const reply = this.#route(method, path, headers, body);
      return { ...reply, pythonJson: true, headers: { ...base, ...reply.headers } };
    } catch (err) {
      if (err instanceof HttpFault) return { ...err.reply, headers: { ...base, ...err.reply.headers } };
      throw err;
    }
  }

  #route(method: string, path: string, headers: IncomingHttpHeaders, body: unknown): Reply {
    const rest = path.replace(/\/+$/, '');
    if (rest === '/v3' && method === 'GET') return { status: 200, body: this.#versionDoc() };
    if (rest === '/v3/auth/tokens') {
      if (method === 'POST') return this.#authenticate(body);
      if (method === 'GET' || method === 'HEAD') return this.#check(headers, method === 'GET');
      if (method === 'DELETE') return this.#revoke(headers);
    }
    const m = /^\/v3\/users\/([^/]+)\/application_credentials$/.exec(rest);
    if (m && method === 'POST') return this.#createAppCredential(m[1] ?? '', headers, body);
    throw fault(404, 'The resource could not be found.');
  }

  #versionDoc(): unknown {
    return {
      version: {
        id: 'v3.14',
        status: 'stable',
        updated: '2020-04-07T00:00:00Z',
        links: [{ rel: 'self', href: `${this.#o.identityUrl}/` }],
        'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
      },
    };
  }

  #authenticate(body: unknown): Reply {
    const auth = obj(obj(body)?.auth);
    const identity = obj(auth?.identity);
    if (!auth || !identity) throw fault(400, "'identity' is a required property");
    const methods = identity.methods;
    if (!Array.isArray(methods) || methods.length === 0) throw fault(400, "'methods' is a required property");
    let user: User;
    let project: Project;
    let appCredential: StoredAppCredential | undefined;
    if (methods.includes('application_credential')) {
      if (auth.scope !== undefined) throw fault(401, 'Application credentials cannot request a scope.');
      appCredential = this.#appCredential(obj(identity.application_credential));
      user = this.#o.identity.users.get(appCredential.userId) ?? this.#fail();
      project = this.#o.identity.projects.get(appCredential.projectId) ?? this.#fail();
    } else if (methods.includes('password')) {
      user = this.#passwordUser(obj(obj(identity.password)?.user));
      project = this.#scope(user, auth.scope);
    } else {
      throw this.#unauthorized();
    }
    const [token, info] = this.#o.identity.issue(user, project, methods as string[], appCredential);
    return { status: 201, headers: { 'X-Subject-Token': token }, body: this.#tokenBody(info, true) };
  }

  #fail(): never {
    throw this.#unauthorized();
  }

  #passwordUser(u: Obj | undefined): User {
    if (!u) throw this.#unauthorized();
    const domain = obj(u.domain);
    const user =
      str(u.id) !== undefined
        ? this.#o.identity.users.get(str(u.id) ?? '')
        : this.#o.identity.userByName(str(u.name) ?? '', str(domain?.id) ?? str(domain?.name) ?? '');
    if (!user || str(u.password) !== user.password) throw this.#unauthorized();
    return user;
  }

  #scope(user: User, scope: unknown): Project {
    if (scope === undefined) {
      return this.#o.identity.projects.get(user.defaultProjectId) ?? this.#fail();
    }
    const p = obj(obj(scope)?.project);
    if (!p) throw this.#unauthorized(); // domain/system scopes are not emulated
    const domain = obj(p.domain);
    const project =
      str(p.id) !== undefined
        ? this.#o.identity.projects.get(str(p.id) ?? '')
        : this.#o.identity.projectByName(str(p.name) ?? '', str(domain?.id) ?? str(domain?.name) ?? '');
    // Keystone answers 401 (not 403/404) when the user has no role on the project.
    if (!project || !user.roles.has(project.id)) throw this.#unauthorized();
    return project;
  }

  #appCredential(ac: Obj | undefined): StoredAppCredential {
    if (!ac) throw this.#unauthorized();
    const creds = [...this.#o.identity.appCredentials.values()];
    let found: StoredAppCredential | undefined;
    if (str(ac.id) !== undefined) {
      found = this.#o.identity.appCredentials.get(str(ac.id) ?? '');
    } else {
      const u = obj(ac.user);
      const user =
        str(u?.id) !== undefined
          ? this.#o.identity.users.get(str(u?.id) ?? '')
          : this.#o.identity.userByName(
              str(u?.name) ?? '',
              str(obj(u?.domain)?.id) ?? str(obj(u?.domain)?.name),
            );
      found = creds.find((c) => c.name === str(ac.name) && c.userId === user?.id);
    }
    if (!found || found.secret !== str(ac.secret)) throw this.#unauthorized();
    return found;
  }

  #tokenBody(info: TokenInfo, withCatalog: boolean): unknown {
    return {
      token: {
        methods: info.methods,
        user: {
          domain: { ...DOMAIN },
          id: info.user.id,
          name: info.user.name,
          password_expires_at: null,
        },
        audit_ids: [info.auditId],
        expires_at: keystoneTime(info.expiresAt),
        issued_at: keystoneTime(info.issuedAt),
        project: { domain: { ...DOMAIN }, id: info.project.id, name: info.project.name },
        is_domain: false,
        roles: info.roles.map((r) => ({ id: r.id, name: r.name })),
        ...(info.appCredential
          ? {
              application_credential: {
                id: info.appCredential.id,
                name: info.appCredential.name,
                restricted: !info.appCredential.unrestricted,
              },
            }
          : {}),
        ...(withCatalog ? { catalog: this.#catalog } : {}),
      },
    };
  }

  #caller(headers: IncomingHttpHeaders): TokenInfo {
    const info = this.#o.identity.validate(str(headers['x-auth-token']));
    if (!info) throw this.#unauthorized();
    return info;
  }

  #check(headers: IncomingHttpHeaders, withBody: boolean): Reply {
    this.#caller(headers);
    const subject = str(headers['x-subject-token']);
    const info = this.#o.identity.validate(subject);
    if (!info || subject === undefined) throw fault(404, 'Could not find token.');
    return {
      status: 200,
      headers: { 'X-Subject-Token': subject },
      ...(withBody ? { body: this.#tokenBody(info, true) } : {}),
    };
  }

  #revoke(headers: IncomingHttpHeaders): Reply {
    this.#caller(headers);
    const subject = str(headers['x-subject-token']);
    if (subject === undefined || !this.#o.identity.revoke(subject)) throw fault(404, 'Could not find token.');
    return { status: 204 };
  }

  #createAppCredential(userId: string, headers: IncomingHttpHeaders, body: unknown): Reply {
    const caller = this.#caller(headers);
    if (caller.user.id !== userId) {
      throw fault(
        403,
        'You are not authorized to perform the requested action: identity:create_application_credential.',
      );
    }
    const ac = obj(obj(body)?.application_credential);
    const name = str(ac?.name);
    if (!ac || !name) throw fault(400, "'name' is a required property");
    const cred = this.#o.identity.createAppCredential(caller.user, caller.project, {
      name,
      ...(str(ac.secret) !== undefined ? { secret: str(ac.secret) } : {}),
      description: str(ac.description) ?? null,
      unrestricted: ac.unrestricted === true,
    });
    return {
      status: 201,
      body: {
        application_credential: {
          id: cred.id,
          name: cred.name,
          description: cred.description,
          secret: cred.secret,
          project_id: cred.projectId,
          user_id: cred.userId,
          roles: cred.roles.map((r) => ({ id: r.id, name: r.name, domain_id: null })),
          expires_at: null,
          unrestricted: cred.unrestricted,
          access_rules: [],
          links: { self: `${this.#o.identityUrl}/users/${cred.userId}/application_credentials/${cred.id}` },
        },
      },
    };
  }
}
