// Keystone's data: users, projects, roles, tokens, application credentials.
// Tokens expire on the injected clock so re-authentication can be exercised quickly.
import type { Clock } from '../clock.ts';
import type { AppCredential } from './types.ts';
import { hexId, tokenString } from './ids.ts';

export interface Role {
  id: string;
  name: string;
}

export interface Project {
  id: string;
  name: string;
  domainId: string;
}

export interface User {
  id: string;
  name: string;
  domainId: string;
  password: string;
  defaultProjectId: string;
  /** Roles per project id. */
  roles: Map<string, Role[]>;
}

export interface StoredAppCredential extends AppCredential {
  description: string | null;
  projectId: string;
  roles: Role[];
  unrestricted: boolean;
}

export interface TokenInfo {
  user: User;
  project: Project;
  roles: Role[];
  methods: string[];
  issuedAt: number;
  expiresAt: number;
  auditId: string;
  appCredential?: StoredAppCredential;
}

export const DOMAIN = { id: 'default', name: 'Default' } as const;

export class Identity {
  readonly roles = {
    admin: { id: hexId(), name: 'admin' },
    member: { id: hexId(), name: 'member' },
    reader: { id: hexId(), name: 'reader' },
  };
  readonly projects = new Map<string, Project>();
  readonly users = new Map<string, User>();
  readonly appCredentials = new Map<string, StoredAppCredential>();
  readonly #tokens = new Map<string, TokenInfo>();
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(clock: Clock, tokenTtlSeconds: number) {
    this.#clock = clock;
    this.#ttlMs = tokenTtlSeconds * 1000;
    const admin = this.addProject('admin');
    const demo = this.addProject('demo');
    const { admin: a, member: m, reader: r } = this.roles;
    this.#addUser('admin', admin, [m, a, r]);
    this.#addUser('demo', demo, [m, r]);
  }

  addProject(name: string, id: string = hexId()): Project {
    const project = { id, name, domainId: DOMAIN.id };
    this.projects.set(id, project);
    return project;
  }

  /** A project id from a scenario: the built-in names map to their projects, others are ids. */
  resolveProjectId(idOrName: string): string {
    const byName = [...this.projects.values()].find((p) => p.name === idOrName);
    if (byName) return byName.id;
    if (!this.projects.has(idOrName)) this.addProject(idOrName, idOrName);
    return idOrName;
  }

  #addUser(name: string, project: Project, roles: Role[]): User {
    const user: User = {
      id: hexId(),
      name,
      domainId: DOMAIN.id,
      password: 'secret',
      defaultProjectId: project.id,
      roles: new Map([[project.id, roles]]),
    };
    this.users.set(user.id, user);
    return user;
  }

  userByName(name: string, domainIdOrName: string | undefined): User | undefined {
    if (domainIdOrName !== undefined && domainIdOrName !== DOMAIN.id && domainIdOrName !== DOMAIN.name)
      return undefined;
    return [...this.users.values()].find((u) => u.name === name);
  }

  projectByName(name: string, domainIdOrName: string | undefined): Project | undefined {
    if (domainIdOrName !== undefined && domainIdOrName !== DOMAIN.id && domainIdOrName !== DOMAIN.name)
      return undefined;
    return [...this.projects.values()].find((p) => p.name === name);
  }

  createAppCredential(
    user: User,
    project: Project,
    opts: {
      name: string;
      secret?: string;
      description?: string | null;
      roles?: Role[];
      unrestricted?: boolean;
    },
  ): StoredAppCredential {
    const cred: StoredAppCredential = {
      id: hexId(),
      name: opts.name,
      secret: opts.secret ?? tokenString().slice(6, 40),
      userId: user.id,
      projectId: project.id,
      description: opts.description ?? null,
      roles: opts.roles ?? user.roles.get(project.id) ?? [],
      unrestricted: opts.unrestricted ?? false,
    };
    this.appCredentials.set(cred.id, cred);
    return cred;
  }

  issue(
    user: User,
    project: Project,
    methods: string[],
    appCredential?: StoredAppCredential,
  ): [string, TokenInfo] {
    const now = this.#clock.now();
    const info: TokenInfo = {
      user,
      project,
      roles: appCredential?.roles ?? user.roles.get(project.id) ?? [],
      methods,
      issuedAt: now,
      expiresAt: now + this.#ttlMs,
      auditId: hexId().slice(0, 22),
      ...(appCredential ? { appCredential } : {}),
    };
    const token = tokenString();
    this.#tokens.set(token, info);
    return [token, info];
  }

  /** The token's facts, or undefined when unknown, revoked or expired (on the sandbox clock). */
  validate(token: string | undefined): TokenInfo | undefined {
    if (!token) return undefined;
    const info = this.#tokens.get(token);
    if (!info) return undefined;
    if (this.#clock.now() >= info.expiresAt) return undefined;
    return info;
  }

  revoke(token: string): boolean {
    return this.#tokens.delete(token);
  }
}

export function isAdmin(info: TokenInfo): boolean {
  return info.roles.some((r) => r.name === 'admin');
}
