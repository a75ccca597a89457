// The sandbox Kubernetes API server: node:http(s) on loopback in front of the ObjectStore.
import { decodeProtobufBody } from './protobuf.ts';
import {
  createServer as createHttp,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { dump, load as loadYaml } from 'js-yaml';
import type { Clock } from '../clock.ts';
import { drainerCrds } from './crds.ts';
import { apiGroupDoc, apiGroupList, coreVersions, resourceList, versionInfo } from './discovery.ts';
import type { EvictionHook } from './eviction.ts';
import { extensionGroups, serveExtension, type ApiExtension, type CreateHook } from './extensions.ts';
import { FaultInjector, type KubeFaults } from './faults.ts';
import { answerMalformedLikeGo } from './malformed.ts';
import { openApiDocument } from './openapi.ts';
import { guardFailures } from './patch.ts';
import { handleResource, type RestContext } from './rest.ts';
import { parseRoute } from './route.ts';
import { failure, notFoundPath, unauthorized } from './status.ts';
import { ObjectStore } from './store.ts';
import { selfSignedCert } from './tls.ts';
import { isStatusError, type Status } from './types.ts';

export interface KubeApiServerOptions {
  host?: string;
  port?: number;
  tls?: boolean;
  /** When set, every API request needs `Authorization: Bearer <token>` (401 otherwise). */
  token?: string;
  clock?: Clock;
  /** Install drainer's CRDs (NodeMaintenance in both groups, KubeVirt, VMI, VMIM); default true. */
  crds?: boolean;
  /** Changes kept per resource for watch resumption (default 10,000). */
  historySize?: number;
  /** Interval of BOOKMARK events on watches that allow them (default 10 s real time). */
  bookmarkIntervalMs?: number;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  at: number;
  /** The client's User-Agent (kubectl names itself): whose request it was. */
  userAgent?: string;
  /**
   * A pod delete or eviction that was admitted, but whose pod stays because finalizers hold it
   * (deletionTimestamp set): the pod is not gone yet, and a drain waits for it.
   */
  heldBy?: string[];
  /**
   * The request took the pod away for good: it was there before and is gone after (a delete with
   * nothing to hold it, an eviction, or the PATCH or PUT that dropped its last finalizer). The
   * moment a drain waiting for that pod goes on.
   */
  removed?: boolean;
  /** A 422 to a JSON patch whose `test` op failed: the writer's guard saw someone write first. */
  guardFailed?: boolean;
  /** The node the pod was bound to before the request (pod requests only). */
  podNode?: string;
}

const POD_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+?)(?:\/eviction)?$/;

export interface KubeApiServer {
  url: string;
  store: ObjectStore;
  kubeconfig(): string;
  requestLog: RequestLogEntry[];
  evictionHooks: EvictionHook[];
  /** Validating admission on create (KubeVirt's VMIM admitter adds one). */
  createHooks: CreateHook[];
  /** Aggregated API groups (KubeVirt's subresources.kubevirt.io). */
  extensions: ApiExtension[];
  faults: KubeFaults;
  /** PEM of the self-signed certificate when tls is on (also in the kubeconfig). */
  caCert?: string;
  /** Accepts only this bearer token from now on (a rotated ServiceAccount token). */
  setToken(token: string): void;
  close(): Promise<void>;
}

/** The request log is bounded: past this, its older half is dropped. */
const MAX_LOG = 100_000;
const PUBLIC_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz']);

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Patches stay text (the store parses them by patch type); other bodies are JSON or YAML, or the
 * protobuf DeleteOptions kubectl sends with a DELETE.
 */
function parseBody(raw: Buffer, contentType: string): unknown {
  if (contentType.includes('protobuf') && raw.length) return decodeProtobufBody(raw);
  const text = raw.toString('utf8');
  if (!text || contentType.includes('patch')) return text || undefined;
  return /yaml/.test(contentType) ? loadYaml(text) : JSON.parse(text);
}

export async function startKubeApiServer(opts: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const host = opts.host ?? '127.0.0.1';
  const now = () => (opts.clock ? opts.clock.now() : Date.now());
  // objects carry real time (what kubectl shows); faults and the request log keep the scenario's
  const store = new ObjectStore({ clock: opts.clock, historySize: opts.historySize });
  if (opts.crds !== false)
    for (const crd of drainerCrds()) store.create('customresourcedefinitions.apiextensions.k8s.io', crd);
  // Like the real watch cache, each resource's window starts when the server starts serving it:
  // a watch from an earlier resourceVersion ("1") is answered with the 410 Expired ERROR event.
  store.compactHistory();
  const faults = new FaultInjector(now, () => store.compactHistory());
  const requestLog: RequestLogEntry[] = [];
  const evictionHooks: EvictionHook[] = [];
  const createHooks: CreateHook[] = [];
  const extensions: ApiExtension[] = [];
  const ctx: RestContext = {
    store,
    evictionHooks,
    createHooks,
    watch: {
      bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 10_000,
      track: (close) => faults.trackWatch(close),
    },
  };
  /** The finalizers that keep a pod being deleted (the path names a pod or its eviction). */
  const finalizersHolding = (path: string): string[] | undefined => {
    const m = POD_PATH.exec(path);
    if (!m) return undefined;
    const pod = store.find('pods', decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? ''));
    return pod?.metadata.deletionTimestamp ? pod.metadata.finalizers : undefined;
  };
  /** The pod a request names, as it is now (uid and node), if any. */
  const podOf = (path: string): { uid: string; node?: string } | undefined => {
    const m = POD_PATH.exec(path);
    if (!m) return undefined;
    const pod = store.find('pods', decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? ''));
    const node = (pod?.spec as { nodeName?: string } | undefined)?.nodeName;
    return pod ? { uid: pod.metadata.uid ?? '', ...(node ? { node } : {}) } : undefined;
  };
  const logRequest = (entry: RequestLogEntry) => {
    if (requestLog.length >= MAX_LOG) requestLog.splice(0, MAX_LOG / 2);
    requestLog.push(entry);
  };
  let serverAddress = '';
  let token = opts.token;

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://sandbox');
    // the pod a write names, as it was before the write (to tell whether the write took it away)
    let before: { uid: string; node?: string } | undefined;
    const log = (status: number, guardFailed = false) => {
      const heldBy = status < 300 && method !== 'GET' ? finalizersHolding(url.pathname) : undefined;
      const removed = before !== undefined && status < 300 && podOf(url.pathname)?.uid !== before.uid;
      const userAgent = req.headers['user-agent'];
      logRequest({
        method,
        path: url.pathname + url.search,
        status,
        at: now(),
        ...(userAgent ? { userAgent } : {}),
        ...(heldBy?.length ? { heldBy } : {}),
        ...(removed ? { removed } : {}),
        ...(guardFailed ? { guardFailed } : {}),
        ...(before?.node ? { podNode: before.node } : {}),
      });
    };
    let replied = false;
    const reply = (status: number, body: unknown) => {
      replied = true;
      log(status, guardFailures.has(body as Status));
      const text =
        body && typeof body === 'object' && 'raw' in body ? String(body.raw) : JSON.stringify(body);
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      const retry = (body as Status | undefined)?.details?.retryAfterSeconds;
      if (status === 429 && retry) headers['Retry-After'] = String(retry);
      res.writeHead(status, headers);
      res.end(text);
    };
    const fail = (e: unknown) => {
      if (isStatusError(e)) reply(e.status.code, e.status);
      else
        reply(
          500,
          failure(500, 'InternalError', `Internal error occurred: ${(e as Error).message}`, { details: {} }),
        );
    };
    try {
      if (token && !PUBLIC_PATHS.has(url.pathname) && req.headers.authorization !== `Bearer ${token}`) {
        throw unauthorized();
      }
      const injected = faults.check(method, url.pathname + url.search);
      if (injected) {
        reply(injected.code, injected);
        return;
      }
    } catch (e) {
      fail(e);
      return;
    }
    readBody(req)
      .then((text) => {
        const contentType = req.headers['content-type'] ?? 'application/json';
        let body: unknown;
        try {
          body = parseBody(text, contentType);
        } catch (e) {
          if (isStatusError(e)) fail(e);
          else reply(400, failure(400, 'BadRequest', 'the request body is not valid JSON'));
          return;
        }
        if (method !== 'GET') before = podOf(url.pathname);
        route(req, res, url, method, body, contentType, reply);
        if (!replied) log(200); // a watch stream answers without reply()
      })
      .catch(fail);
  };

  const route = (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    method: string,
    body: unknown,
    contentType: string,
    reply: (s: number, b: unknown) => void,
  ): void => {
    try {
      const p = url.pathname.replace(/\/+$/, '') || '/';
      if (p === '/version') return reply(200, versionInfo());
      if (p === '/healthz' || p === '/livez' || p === '/readyz') return reply(200, 'ok');
      if (p.startsWith('/openapi/')) {
        const doc = openApiDocument(store.resources(), p);
        return doc ? reply(200, doc) : reply(404, notFoundPath().status);
      }
      const segments = p.split('/').filter(Boolean).map(decodeURIComponent);
      const extended = serveExtension(extensions, method, segments, body);
      if (extended) return reply(extended.code, extended.body);
      const r = parseRoute(p);
      const resources = store.resources();
      switch (r.kind) {
        case 'coreVersions':
          return reply(200, coreVersions(serverAddress));
        case 'groupList': {
          const list = apiGroupList(resources);
          return reply(200, { ...list, groups: [...list.groups, ...extensionGroups(extensions)] });
        }
        case 'group': {
          const g = apiGroupDoc(resources, r.group);
          return g ? reply(200, g) : reply(404, notFoundPath().status);
        }
        case 'resourceList': {
          const l = resourceList(resources, r.group, r.version);
          return l ? reply(200, l) : reply(404, notFoundPath().status);
        }
        case 'resource': {
          const rt = store.findResource(r.group, r.version, r.plural);
          if (!rt) throw notFoundPath();
          handleResource(ctx, { rt, ...r, query: url.searchParams, body, contentType }, req, res, reply);
          return;
        }
        default:
          throw notFoundPath();
      }
    } catch (e) {
      if (isStatusError(e)) reply(e.status.code, e.status);
      else
        reply(
          500,
          failure(500, 'InternalError', `Internal error occurred: ${(e as Error).message}`, { details: {} }),
        );
    }
  };

  let server: Server;
  let caCert: string | undefined;
  if (opts.tls) {
    const { key, cert } = await selfSignedCert(host);
    caCert = cert;
    server = createHttps({ key, cert }, handler);
  } else server = createHttp(handler);
  server.keepAliveTimeout = 60_000;
  // The method is what Go would take for one: the request line's first word.
  answerMalformedLikeGo(server, (line) =>
    logRequest({ method: line.split(' ')[0] ?? '', path: line, status: 400, at: now() }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  serverAddress = `${hostPart}:${port}`;
  const url = `${opts.tls ? 'https' : 'http'}://${serverAddress}`;

  return {
    url,
    store,
    requestLog,
    evictionHooks,
    createHooks,
    extensions,
    faults,
    caCert,
    kubeconfig: () => kubeconfigYaml(url, caCert, token),
    setToken: (t) => {
      token = t;
    },
    close: async () => {
      faults.dropWatches();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function kubeconfigYaml(url: string, caCert: string | undefined, token: string | undefined): string {
  const cluster: Record<string, string | boolean> = { server: url };
  if (caCert) cluster['certificate-authority-data'] = Buffer.from(caCert).toString('base64');
  // client-node 2.x refuses plain http unless the cluster is marked insecure; kubectl accepts either.
  else cluster['insecure-skip-tls-verify'] = true;
  return dump(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'drainer-sandbox', cluster }],
      users: [{ name: 'drainer-sandbox', user: token ? { token } : {} }],
      contexts: [
        {
          name: 'drainer-sandbox',
          context: { cluster: 'drainer-sandbox', user: 'drainer-sandbox', namespace: 'default' },
        },
      ],
      'current-context': 'drainer-sandbox',
      preferences: {},
    },
    { lineWidth: -1 },
  );
}
