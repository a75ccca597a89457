// startOpenStack: Keystone (/v3) and Nova (/compute/v2.1) on one loopback HTTP server,
// with a simulated nova-compute per host driven by the injected clock.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BadJson, readJson, send } from './http.ts';
import type { Reply } from './http.ts';
import { Identity } from './identity.ts';
import { seededRandom, uuid } from './ids.ts';
import { Keystone } from './keystone.ts';
import { parseVersion } from './microversion.ts';
import { Nova } from './nova/api.ts';
import { ComputeSim } from './nova/compute.ts';
import { NovaModel, isDeleted, migrationView, serviceView } from './nova/model.ts';
import { Placement } from './placement.ts';
import type {
  ComputeTimings,
  Credentials,
  NovaFaults,
  OpenStackSandbox,
  OpenStackState,
  RequestLogEntry,
  ServerSpec,
  StartOpenStackOptions,
} from './types.ts';

export type * from './types.ts';

const DEFAULT_TIMINGS: ComputeTimings = {
  scheduleMs: 1000,
  prepareMs: 300,
  postMigrationMs: 3000,
  abortMs: 200,
  resizeFinishMs: 200,
  shutdownMs: 60_000,
  powerOnMs: 5000,
  snapshotMs: 10_000,
  shelvedOffloadMs: 0,
  deleteMs: 1000,
};

/** The action a POST /servers/{id}/action body names ({"os-stop": null} → os-stop). */
const actionName = (body: unknown): string | undefined =>
  body && typeof body === 'object' ? Object.keys(body)[0] : undefined;

function defaultFaults(partial: Partial<NovaFaults> | undefined): NovaFaults {
  return {
    errorRate: 0,
    latencyMs: 0,
    failMigrations: () => false,
    hangMigrations: () => false,
    hideHost: false,
    clockAheadMs: () => 0,
    dropAnswer: () => false,
    errorMigrations: () => undefined,
    completeWithoutMove: () => false,
    refuse: () => undefined,
    ...partial,
  };
}

export async function startOpenStack(opts: StartOpenStackOptions): Promise<OpenStackSandbox> {
  const { clock } = opts;
  const region = opts.region ?? 'RegionOne';
  const minVersion = { major: 2, minor: 1 };
  const maxVersion = parseVersion(opts.maxMicroversion ?? '2.93');
  if (!maxVersion) throw new RangeError(`maxMicroversion must look like 2.NN, got ${opts.maxMicroversion}`);
  const faults = defaultFaults(opts.faults);
  const identity = new Identity(clock, opts.tokenTtlSeconds ?? 3600);
  const model = new NovaModel(clock);
  model.clockAhead = (id) => faults.clockAheadMs(id); // read at each write: faults can change
  const compute = new ComputeSim(model, clock, faults, { ...DEFAULT_TIMINGS, ...opts.timings });
  for (const host of opts.hosts) model.addHost(host);

  const adminUser = identity.userByName('admin', 'default');
  const demoUser = identity.userByName('demo', 'default');
  if (!adminUser || !demoUser) throw new Error('built-in users missing');
  const userOfProject = (projectId: string): string =>
    [adminUser, demoUser].find((u) => u.defaultProjectId === projectId)?.id ?? adminUser.id;
  const addServer = (spec: ServerSpec) => {
    const tenantId = identity.resolveProjectId(spec.projectId);
    return model.addServer(spec, tenantId, userOfProject(tenantId));
  };
  for (const spec of opts.servers) addServer(spec);
  for (const g of opts.serverGroups ?? []) {
    const ids = g.members.map((name) => [...model.servers.values()].find((s) => s.name === name)?.id);
    const projectId = identity.resolveProjectId(g.projectId ?? 'admin');
    model.serverGroups.push({
      id: uuid(),
      name: g.name,
      policy: g.policy,
      members: ids.filter((id): id is string => id !== undefined),
      projectId,
      userId: userOfProject(projectId),
    });
  }
  const adminProject = identity.projects.get(adminUser.defaultProjectId);
  const appCred = adminProject
    ? identity.createAppCredential(adminUser, adminProject, { name: 'drainer-sandbox' })
    : undefined;
  if (!appCred) throw new Error('admin project missing');

  const requestLog: RequestLogEntry[] = [];
  // Both need the URLs, known once the server listens.
  const apis: { nova?: Nova; keystone?: Keystone; placement?: Placement } = {};

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const method = req.method ?? 'GET';
    void (async () => {
      let body: unknown;
      let badJson = false;
      try {
        body = await readJson(req);
      } catch (err) {
        if (!(err instanceof BadJson)) throw err;
        badJson = true;
      }
      let reply: Reply;
      let microversion: string | undefined;
      if (url.pathname === '/compute' || url.pathname.startsWith('/compute/')) {
        const answer = await apis.nova!.handle({
          method,
          path: url.pathname.slice('/compute'.length),
          query: url.searchParams,
          headers: req.headers,
          body,
          badJson,
        });
        reply = answer.reply;
        microversion = answer.microversion;
      } else if (
        apis.placement &&
        (url.pathname === '/placement' || url.pathname.startsWith('/placement/'))
      ) {
        reply = apis.placement.handle({
          method,
          path: url.pathname.slice('/placement'.length),
          headers: req.headers,
        });
      } else if (url.pathname === '/v3' || url.pathname.startsWith('/v3/')) {
        reply = badJson
          ? {
              status: 400,
              body: { error: { code: 400, message: 'Malformed request body', title: 'Bad Request' } },
            }
          : apis.keystone!.handle(method, url.pathname, req.headers, body);
      } else {
        reply = { status: 404, body: { error: { code: 404, message: 'Not Found', title: 'Not Found' } } };
      }
      if (faults.dropAnswer(method, url.pathname)) {
        // applied, but the answer is lost on the way: the client sees a reset
        requestLog.push({ method, path: url.pathname + url.search, status: 0, at: clock.now() });
        req.socket.destroy();
        return;
      }
      const action = /\/servers\/[^/]+\/action$/.test(url.pathname) ? actionName(body) : undefined;
      const userAgent = req.headers['user-agent'];
      requestLog.push({
        method,
        path: url.pathname + url.search,
        status: reply.status,
        at: clock.now(),
        ...(microversion ? { microversion } : {}),
        ...(userAgent ? { userAgent } : {}),
        ...(action ? { action } : {}),
      });
      // Nova's Date header is Nova's clock: here the emulation's.
      send(res, { ...reply, headers: { Date: new Date(clock.now()).toUTCString(), ...reply.headers } });
    })().catch((err: unknown) => {
      // A bug in the emulation: answer like a broken API rather than hanging the client.
      if (!res.headersSent)
        send(res, { status: 500, body: { computeFault: { code: 500, message: String(err) } } });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const hostPart = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const base = `http://${hostPart}:${addr.port}`;
  const identityUrl = `${base}/v3`;
  const rootUrl = `${base}/compute`;
  const computeUrl = `${rootUrl}/v2.1`;
  const placementUrl = opts.placement === false ? undefined : `${base}/placement`;
  apis.keystone = new Keystone({
    identity,
    identityUrl,
    computeUrl,
    region,
    ...(placementUrl ? { placementUrl } : {}),
  });
  if (placementUrl) apis.placement = new Placement({ model, identity, identityUrl });
  apis.nova = new Nova({
    model,
    compute,
    identity,
    clock,
    faults,
    random: seededRandom(opts.seed ?? 1),
    rootUrl,
    identityUrl,
    minVersion,
    maxVersion,
    maxLimit: opts.maxLimit ?? 1000,
  });

  const creds = (name: 'admin' | 'demo'): Credentials => {
    const user = name === 'admin' ? adminUser : demoUser;
    return {
      username: name,
      password: user.password,
      project: name,
      domain: 'Default',
      userId: user.id,
      projectId: user.defaultProjectId,
    };
  };

  const state: OpenStackState = {
    servers: () => [...model.servers.values()].filter((s) => !isDeleted(s)).map((s) => model.serverView(s)),
    server: (id) => {
      const s = model.servers.get(id);
      return s ? model.serverView(s) : undefined;
    },
    serversOnHost: (host) =>
      [...model.servers.values()]
        .filter((s) => s.host === host && !isDeleted(s))
        .map((s) => model.serverView(s)),
    services: () => model.services.map(serviceView),
    service: (host, binary = 'nova-compute') => {
      const s = model.services.find((x) => x.host === host && x.binary === binary);
      return s ? serviceView(s) : undefined;
    },
    migrations: (serverId) =>
      model.migrations
        .filter((m) => serverId === undefined || m.instanceUuid === serverId)
        .map(migrationView),
    migrateCalls: (serverId) => model.migrateCalls.get(serverId) ?? 0,
    addServer: (spec) => model.serverView(addServer(spec)),
    addHost: (spec) => model.addHost(spec),
    serverGroups: () => model.serverGroups.map((g) => ({ ...g, members: [...g.members] })),
    subscribe: (listener) => model.subscribe(listener),
  };

  return {
    identityUrl,
    computeUrl,
    placementUrl,
    region,
    credentials: {
      admin: creds('admin'),
      demo: creds('demo'),
      appCredential: { id: appCred.id, name: appCred.name, secret: appCred.secret, userId: appCred.userId },
    },
    state,
    requestLog,
    faults,
    close: async () => {
      compute.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
