// The Nova request pipeline: injected faults → version documents (no auth) → token (401)
// → microversion (400/406) → route. Every answer after negotiation echoes the version.
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../../clock.ts';
import type { Identity } from '../identity.ts';
import { isAdmin } from '../identity.ts';
import type { Reply } from '../http.ts';
import { HttpFault, requestId } from '../http.ts';
import type { Microversion } from '../microversion.ts';
import { formatVersion, negotiate, versionHeaders } from '../microversion.ts';
import type { NovaFaults } from '../types.ts';
import { deleteServer, serverAction } from './actions.ts';
import type { ComputeSim } from './compute.ts';
import type { NovaContext } from './context.ts';
import { badRequest, notFound, novaFault } from './context.ts';
import { listServerGroups, showFlavor } from './flavors.ts';
import { listInstanceActions } from './instance-actions.ts';
import { listHypervisors, searchHypervisors, showHypervisor } from './hypervisors.ts';
import {
  abortServerMigration,
  listMigrations,
  listServerMigrations,
  serverMigrationAction,
  showServerMigration,
} from './migrations.ts';
import {
  deleteMetadataItem,
  listMetadata,
  mergeMetadata,
  replaceMetadata,
  setMetadataItem,
  showMetadataItem,
} from './metadata.ts';
import type { NovaModel } from './model.ts';
import { listServers, showServer } from './servers.ts';
import { listServices, updateService } from './services.ts';

export interface NovaOptions {
  model: NovaModel;
  compute: ComputeSim;
  identity: Identity;
  clock: Clock;
  faults: NovaFaults;
  random: () => number;
  /** http://127.0.0.1:P/compute (bookmark base) and its …/v2.1. */
  rootUrl: string;
  identityUrl: string;
  minVersion: Microversion;
  maxVersion: Microversion;
  maxLimit: number;
}

export interface NovaRequest {
  method: string;
  /** Path after /compute. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
  badJson: boolean;
}

const HTML_404 =
  '<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n' +
  '  The resource could not be found.<br /><br />\n\n\n\n </body>\n</html>';

type Handler = (ctx: NovaContext, ...params: string[]) => Reply;

const ROUTES: [string, RegExp, Handler][] = [
  ['GET', /^os-services$/, listServices],
  ['PUT', /^os-services\/([^/]+)$/, updateService],
  ['GET', /^os-hypervisors$/, (c) => listHypervisors(c, false)],
  ['GET', /^os-hypervisors\/detail$/, (c) => listHypervisors(c, true)],
  ['GET', /^os-hypervisors\/([^/]+)\/search$/, (c, p) => searchHypervisors(c, p, false)],
  ['GET', /^os-hypervisors\/([^/]+)\/servers$/, (c, p) => searchHypervisors(c, p, true)],
  ['GET', /^os-hypervisors\/([^/]+)$/, showHypervisor],
  ['GET', /^servers$/, (c) => listServers(c, false)],
  ['GET', /^servers\/detail$/, (c) => listServers(c, true)],
  ['GET', /^servers\/([^/]+)$/, showServer],
  ['DELETE', /^servers\/([^/]+)$/, deleteServer],
  ['POST', /^servers\/([^/]+)\/action$/, serverAction],
  ['GET', /^servers\/([^/]+)\/os-instance-actions$/, listInstanceActions],
  ['GET', /^servers\/([^/]+)\/metadata$/, listMetadata],
  ['POST', /^servers\/([^/]+)\/metadata$/, mergeMetadata],
  ['PUT', /^servers\/([^/]+)\/metadata$/, replaceMetadata],
  ['GET', /^servers\/([^/]+)\/metadata\/([^/]+)$/, showMetadataItem],
  ['PUT', /^servers\/([^/]+)\/metadata\/([^/]+)$/, setMetadataItem],
  ['DELETE', /^servers\/([^/]+)\/metadata\/([^/]+)$/, deleteMetadataItem],
  ['GET', /^servers\/([^/]+)\/migrations$/, listServerMigrations],
  ['GET', /^servers\/([^/]+)\/migrations\/([^/]+)$/, showServerMigration],
  ['DELETE', /^servers\/([^/]+)\/migrations\/([^/]+)$/, abortServerMigration],
  ['POST', /^servers\/([^/]+)\/migrations\/([^/]+)\/action$/, serverMigrationAction],
  ['GET', /^os-migrations$/, listMigrations],
  ['GET', /^flavors\/([^/]+)$/, showFlavor],
  ['GET', /^os-server-groups$/, listServerGroups],
];

export interface NovaAnswer {
  reply: Reply;
  microversion?: string;
}

export class Nova {
  readonly #o: NovaOptions;

  constructor(opts: NovaOptions) {
    this.#o = opts;
  }

  async handle(req: NovaRequest): Promise<NovaAnswer> {
    const ids = { 'x-openstack-request-id': requestId() };
    Object.assign(ids, { 'x-compute-request-id': ids['x-openstack-request-id'] });
    const { faults, clock } = this.#o;
    if (faults.latencyMs > 0) await clock.sleep(faults.latencyMs);
    if (faults.errorRate > 0 && this.#o.random() < faults.errorRate) {
      const reply = novaFault(
        503,
        'The server is currently unavailable. Please try again at a later time.',
      ).reply;
      return { reply: { ...reply, pythonJson: true, headers: { ...reply.headers, ...ids } } };
    }
    const refused = faults.refuse(req.method, req.path, req.body);
    if (refused) {
      const reply = novaFault(refused.status, refused.message).reply;
      return { reply: { ...reply, pythonJson: true, headers: { ...reply.headers, ...ids } } };
    }
    let version: Microversion | undefined;
    try {
      const path = req.path.replace(/\/+$/, '');
      if (path === '' && req.method === 'GET') {
        return { reply: { status: 200, body: this.#versions(), pythonJson: true } };
      }
      if (path !== '/v2.1' && !path.startsWith('/v2.1/')) throw notFound();
      if (path === '/v2.1' && req.method === 'GET') {
        version = negotiate(req.headers, this.#o.minVersion, this.#o.maxVersion);
        return this.#answer({ status: 200, body: { version: this.#versionDoc() } }, version, ids);
      }
      const token = this.#o.identity.validate(headerString(req.headers['x-auth-token']));
      if (!token) return { reply: this.#unauthorized(ids) };
      version = negotiate(req.headers, this.#o.minVersion, this.#o.maxVersion);
      const rest = path.slice('/v2.1'.length).replace(/^\//, '');
      const reply = this.#route(req, rest, version, token, ids['x-openstack-request-id']);
      return this.#answer(reply, version, ids);
    } catch (err) {
      if (!(err instanceof HttpFault)) throw err;
      return this.#answer(err.reply, version, ids);
    }
  }

  #answer(reply: Reply, version: Microversion | undefined, ids: Record<string, string>): NovaAnswer {
    const text = version ? formatVersion(version) : undefined;
    return {
      reply: {
        ...reply,
        pythonJson: true,
        headers: { ...(text ? versionHeaders(text) : {}), ...reply.headers, ...ids },
      },
      ...(text ? { microversion: text } : {}),
    };
  }

  #unauthorized(ids: Record<string, string>): Reply {
    return {
      status: 401,
      pythonJson: true,
      headers: { 'WWW-Authenticate': `Keystone uri="${this.#o.identityUrl}"`, ...ids },
      body: {
        error: {
          code: 401,
          title: 'Unauthorized',
          message: 'The request you have made requires authentication.',
        },
      },
    };
  }

  #route(
    req: NovaRequest,
    rest: string,
    version: Microversion,
    token: NovaContext['token'],
    answerId: string,
  ): Reply {
    if (req.badJson) throw badRequest('Malformed request body');
    const ctx: NovaContext = {
      method: req.method,
      segments: rest.split('/'),
      query: req.query,
      body: req.body,
      version,
      requestId: answerId,
      token,
      admin: isAdmin(token),
      hideHost: this.#o.faults.hideHost,
      model: this.#o.model,
      compute: this.#o.compute,
      computeUrl: `${this.#o.rootUrl}/v2.1`,
      bookmarkUrl: this.#o.rootUrl,
      maxLimit: this.#o.maxLimit,
    };
    for (const [method, re, handler] of ROUTES) {
      const m = re.exec(rest);
      if (m && method === req.method) return handler(ctx, ...m.slice(1).map((p) => decodeURIComponent(p)));
    }
    // Nova's router answers any unrouted method/path with webob's HTML 404.
    throw new HttpFault({
      status: 404,
      headers: { 'Content-Type': 'text/html; charset=UTF-8' },
      text: HTML_404,
    });
  }

  #versionDoc(): Record<string, unknown> {
    return {
      id: 'v2.1',
      status: 'CURRENT',
      version: formatVersion(this.#o.maxVersion),
      min_version: formatVersion(this.#o.minVersion),
      updated: '2013-07-23T11:33:21Z',
      links: [
        { rel: 'self', href: `${this.#o.rootUrl}/v2.1/` },
        { rel: 'describedby', type: 'text/html', href: 'http://docs.openstack.org/' },
      ],
      'media-types': [
        { base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' },
      ],
    };
  }

  #versions(): unknown {
    return {
      versions: [
        {
          id: 'v2.0',
          status: 'SUPPORTED',
          version: '',
          min_version: '',
          updated: '2011-01-21T11:33:21Z',
          links: [{ rel: 'self', href: `${this.#o.rootUrl}/v2/` }],
        },
        {
          id: 'v2.1',
          status: 'CURRENT',
          version: formatVersion(this.#o.maxVersion),
          min_version: formatVersion(this.#o.minVersion),
          updated: '2013-07-23T11:33:21Z',
          links: [{ rel: 'self', href: `${this.#o.rootUrl}/v2.1/` }],
        },
      ],
    };
  }
}

function headerString(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
