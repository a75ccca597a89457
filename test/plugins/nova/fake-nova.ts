// A small Keystone + Nova state machine behind nock, so plugin tests read like stories.
// Time moves with the host listing: every GET /servers/detail is one "tick" in which
// migrations progress, so tests are deterministic and need no timers.
import nock from 'nock';

export const IDENTITY = 'http://keystone.test/v3';
export const COMPUTE = 'http://nova.test/v2.1';
export const PASSWORD = 'pw-Sup3r-S3cret';
export const OTHER_ENDPOINT = 'http://nova-public.test/v2.1';

export interface FakeServer {
  id: string;
  name: string;
  tenant_id: string;
  status: string;
  task_state: string | null;
  host: string;
  locked?: boolean;
  /** Server metadata (drainer reads drainer.dev:maintenance). */
  metadata?: Record<string, string>;
  /** Ticks a migration takes (default 2). */
  ticks?: number;
  /** The next N migration attempts fail asynchronously (server back on the source). */
  failAttempts?: number;
  /** Migrations of this server never finish. */
  hang?: boolean;
  /** A live migration is scheduled for this many ticks first (its record `accepted`: not listed, not abortable). */
  schedulingTicks?: number;
  /** After an abort, Nova rolls back for this many ticks (server still MIGRATING). */
  rollbackTicks?: number;
  /** The abort loses the race: Nova answers 202, then the migration completes anyway. */
  abortTooLate?: boolean;
  /** A failing attempt marks its record `error` first and rolls back for this many ticks. */
  failRollbackTicks?: number;
  /** A failing attempt's record goes `error` and the server is left MIGRATING for good. */
  stuckOnFailure?: boolean;
  /** After confirmResize the server still shows VERIFY_RESIZE for this many ticks. */
  confirmLagTicks?: number;
  /** Its record is stamped by a host whose clock runs this far ahead (ms). */
  clockAheadMs?: number;
  /** A failing attempt leaves the server in ERROR with this fault message. */
  faultOnFailure?: string;
  /** When Nova last changed it (its `updated_at`, already skewed by clockAheadMs). */
  updatedAt?: number;
  /** What the last stamp saw, to tell a change. */
  stamp?: string;
  fault?: string;
}

interface FakeMigration {
  id: number;
  serverId: string;
  type: 'live-migration' | 'migration';
  status: string;
  source: string;
  dest: string;
  ticksLeft: number;
  /** Ticks left in scheduling (status `accepted`) before it runs. */
  schedulingLeft?: number;
  priorStatus: string;
  /** What the end of ticksLeft means: finish the move, or end a rollback (cancelled/failed). */
  ending?: 'move' | 'cancelled' | 'failed' | 'stuck';
  createdAt?: number;
  updatedAt?: number;
}

interface FakeService {
  uuid: string;
  legacyId: number;
  host: string;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
}

export interface RequestSeen {
  method: string;
  path: string;
  query: URLSearchParams;
  microversion: string | undefined;
  body: unknown;
}

type Reply = [number, unknown?, Record<string, string>?];
interface Identity {
  password?: { user?: { password?: string } };
  application_credential?: { id?: string; secret?: string };
}
/** Request bodies as the routes read them. */
interface Body {
  host: string;
  status: 'enabled' | 'disabled';
  disabled_reason?: string | null;
}

export class FakeNova {
  maxMicroversion = '2.90';
  pageSize = 1000;
  tokenTtlMs = 3_600_000;
  now: () => number = Date.now;
  readonly services: FakeService[] = [];
  readonly hypervisors: { hostname: string; host: string }[] = [];
  readonly servers = new Map<string, FakeServer>();
  readonly migrations: FakeMigration[] = [];
  readonly requests: RequestSeen[] = [];
  readonly tokens = new Set<string>();
  inFlight = 0;
  maxInFlight = 0;
  /** Called with each request as it arrives, before it is answered. */
  onRequest: ((r: RequestSeen) => void) | undefined;
  /** A policy that hides OS-EXT-SRV-ATTR:host from drainer's role. */
  hideHost = false;
  /**
   * Filter `changes-since` by each server's `updated` as Nova does (off: every server is listed,
   * which the older stories rely on).
   */
  honourChangesSince = false;
  /** Servers the changes-since listing never shows (a change drainer missed). */
  readonly missedByChanges = new Set<string>();
  #faults: { method: string; path: RegExp; status: number; times: number; param?: string }[] = [];
  #drops: { method: string; path: RegExp; times: number; settle: boolean }[] = [];
  #tokenCount = 0;
  #migrationCount = 0;

  constructor(hosts: string[] = ['compute-a', 'compute-b']) {
    hosts.forEach((h, i) => this.addHost(h, h, i));
  }

  addHost(host: string, hypervisorHostname = host, i = this.services.length): void {
    this.services.push({
      uuid: `svc-uuid-${host}`,
      legacyId: 100 + i,
      host,
      status: 'enabled',
      disabled_reason: null,
    });
    this.hypervisors.push({ hostname: hypervisorHostname, host });
  }

  service(host: string): FakeService {
    const s = this.services.find((x) => x.host === host);
    if (!s) throw new Error(`no service ${host}`);
    return s;
  }

  /** GET /servers/{id}/migrations moves time on by one tick, as listing the servers does. */
  tickOnMigrationList = false;

  addServer(s: Partial<FakeServer> & { name: string; host: string }): FakeServer {
    const server: FakeServer = {
      id: s.id ?? `srv-${String(this.servers.size + 1).padStart(3, '0')}`,
      tenant_id: 'project-admin',
      status: 'ACTIVE',
      task_state: null,
      ...s,
    };
    this.servers.set(server.id, server);
    return server;
  }

  /** The next `times` requests matching method+path (and having query `param`, if given) answer `status`. */
  fail(method: string, path: RegExp, status: number, times = 1, param?: string): void {
    this.#faults.push({ method, path, status, times, ...(param ? { param } : {}) });
  }

  /**
   * The next `times` matching requests are applied, then the connection is reset before the
   * answer goes out. `settle`: every migration runs to its end first (finished within the backoff).
   */
  dropAnswer(method: string, path: RegExp, times = 1, settle = false): void {
    this.#drops.push({ method, path, times, settle });
  }

  revokeTokens(): void {
    this.tokens.clear();
  }

  /** The nock interceptors; call nock.cleanAll() after the test. */
  install(): void {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE']) {
      for (const origin of [new URL(IDENTITY).origin, new URL(COMPUTE).origin]) {
        // nock 15 hands the reply function a fetch Request.
        nock(origin)
          .persist()
          .intercept(() => true, method)
          .reply(async (request: Request) => {
            const headers = Object.fromEntries(request.headers.entries());
            const drop = this.#drops.find(
              (d) => d.method === method && d.path.test(new URL(request.url).pathname) && d.times > 0,
            );
            const reply = this.#handle(method, request.url, headers, await request.text());
            this.#stampChanges();
            if (drop) {
              drop.times--;
              for (let i = 0; drop.settle && i < 100 && this.inFlight > 0; i++) this.tick();
              this.#stampChanges();
              throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
            }
            const [status, json, hdrs] = reply;
            return [status, json, { date: new Date(this.now()).toUTCString(), ...hdrs }];
          });
      }
    }
  }

  count(method: string, path: RegExp): number {
    return this.requests.filter((r) => r.method === method && path.test(r.path)).length;
  }

  // --- dispatch -------------------------------------------------------------------------

  #handle(method: string, url: string, headers: Record<string, string | undefined>, raw: unknown): Reply {
    const u = new URL(url);
    const body = typeof raw === 'string' && raw ? (JSON.parse(raw) as unknown) : raw;
    const mv = headers['openstack-api-version']?.replace(/^compute /, '');
    const seen: RequestSeen = { method, path: u.pathname, query: u.searchParams, microversion: mv, body };
    this.requests.push(seen);
    this.onRequest?.(seen);
    const fault = this.#faults.find(
      (f) =>
        f.method === method &&
        f.path.test(u.pathname) &&
        (!f.param || u.searchParams.has(f.param)) &&
        f.times > 0,
    );
    if (fault) {
      fault.times--;
      return [fault.status, { computeFault: { code: fault.status, message: 'injected' } }, reqId()];
    }
    if (u.hostname === 'keystone.test') return this.#keystone(method, u.pathname, body);
    if (u.pathname === '/v2.1' || u.pathname === '/v2.1/') return [200, this.#versionDoc()];
    if (!headers['x-auth-token'] || !this.tokens.has(headers['x-auth-token'])) {
      return [401, { error: { code: 401, message: 'The request you have made requires authentication.' } }];
    }
    const minor = Number((mv ?? '2.1').split('.')[1]);
    return this.#nova(method, u.pathname.replace(/^\/v2\.1/, ''), u.searchParams, body as Body, minor);
  }

  #versionDoc() {
    return { version: { id: 'v2.1', status: 'CURRENT', version: this.maxMicroversion, min_version: '2.1' } };
  }

  #keystone(method: string, path: string, body: unknown): Reply {
    if (method !== 'POST' || path !== '/v3/auth/tokens') return [404];
    const identity = (body as { auth?: { identity?: Identity } } | undefined)?.auth?.identity ?? {};
    const ok =
      identity.password?.user?.password === PASSWORD ||
      (identity.application_credential?.id === 'app-cred-1' &&
        identity.application_credential?.secret === PASSWORD);
    if (!ok)
      return [401, { error: { code: 401, message: 'The request you have made requires authentication.' } }];
    const token = `tok-${++this.#tokenCount}-abcdef`;
    this.tokens.add(token);
    const now = this.now();
    const endpoint = (iface: string, region: string) => ({
      interface: iface,
      region_id: region,
      url: COMPUTE,
    });
    return [
      201,
      {
        token: {
          issued_at: new Date(now).toISOString(),
          expires_at: new Date(now + this.tokenTtlMs).toISOString(),
          catalog: [
            { type: 'identity', endpoints: [endpoint('public', 'RegionOne')] },
            {
              type: 'compute',
              endpoints: [endpoint('public', 'RegionOne'), endpoint('internal', 'RegionOne')],
            },
          ],
        },
      },
      { 'x-subject-token': token },
    ];
  }

  #nova(method: string, path: string, q: URLSearchParams, body: Body, minor: number): Reply {
    const key = `${method} ${path}`;
    const listings: Record<string, () => Reply> = {
      'GET /os-services': () => [200, { services: this.#listServices(q, minor) }],
      'GET /os-hypervisors/detail': () => this.#hypervisorsDetail(q, minor),
      'GET /servers/detail': () => this.#listServers(q),
      'GET /os-migrations': () => [200, { migrations: this.#listMigrations(q, minor) }],
    };
    const listing = listings[key];
    if (listing) return listing();
    if (key === 'PUT /os-services/disable-log-reason' || key === 'PUT /os-services/enable') {
      if (minor >= 53) return [404, { itemNotFound: { code: 404, message: 'Not found' } }];
      const svc = this.service(body.host);
      svc.status = path.endsWith('enable') ? 'enabled' : 'disabled';
      svc.disabled_reason = svc.status === 'disabled' ? (body.disabled_reason ?? null) : null;
      return [200, { service: { host: svc.host, binary: 'nova-compute', status: svc.status } }];
    }
    let m = /^\/os-services\/([^/]+)$/.exec(path);
    if (method === 'PUT' && m) {
      if (minor < 53) return [404, { itemNotFound: { code: 404, message: 'Not found' } }];
      const svc = this.services.find((s) => s.uuid === m![1]);
      if (!svc) return [404, { itemNotFound: { code: 404, message: 'Service not found' } }];
      svc.status = body.status;
      svc.disabled_reason = body.status === 'disabled' ? (body.disabled_reason ?? null) : null;
      return [200, { service: this.#serviceJson(svc, minor) }];
    }
    m = /^\/servers\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) {
      const s = this.servers.get(m[1]!);
      return s
        ? [200, { server: this.#serverJson(s) }]
        : [404, { itemNotFound: { code: 404, message: 'not found' } }];
    }
    m = /^\/servers\/([^/]+)\/action$/.exec(path);
    if (method === 'POST' && m) return this.#action(m[1]!, body as unknown as Record<string, unknown>, minor);
    m = /^\/servers\/([^/]+)\/migrations$/.exec(path);
    if (method === 'GET' && m) {
      // a client that waits on a migration's end by looking at this list sees time pass too
      if (this.tickOnMigrationList) this.tick();
      const list = this.migrations.filter((x) => x.serverId === m![1] && x.status === 'running');
      return [
        200,
        { migrations: list.map((x) => ({ id: x.id, status: x.status, server_uuid: x.serverId })) },
      ];
    }
    m = /^\/servers\/([^/]+)\/migrations\/(\d+)$/.exec(path);
    if (method === 'DELETE' && m) return this.#abort(m[1]!, Number(m[2]), minor);
    return [404, { itemNotFound: { code: 404, message: `no route ${key}` } }];
  }

  // Nova's filters (exact matches; changes-since only from 2.59, newest first from 2.59).
  #listMigrations(q: URLSearchParams, minor: number) {
    const since = minor >= 59 && q.get('changes-since') ? Date.parse(q.get('changes-since')!) : undefined;
    const rows = this.migrations.filter(
      (x) =>
        (!q.get('source_compute') || x.source === q.get('source_compute')) &&
        (!q.get('instance_uuid') || x.serverId === q.get('instance_uuid')) &&
        (!q.get('migration_type') || x.type === q.get('migration_type')) &&
        (since === undefined || (x.updatedAt ?? 0) >= since),
    );
    if (minor >= 59) rows.sort((a, b) => b.id - a.id);
    const iso = (t: number | undefined) => new Date(t ?? 0).toISOString().replace(/Z$/, '');
    return rows.map((x) => ({
      id: x.id,
      instance_uuid: x.serverId,
      status: x.status,
      source_compute: x.source,
      dest_compute: x.dest,
      migration_type: x.type,
      created_at: iso(x.createdAt),
      updated_at: iso(x.updatedAt),
    }));
  }

  #setStatus(mig: FakeMigration, status: string): void {
    mig.status = status;
    mig.updatedAt = this.now();
  }

  #serviceJson(s: FakeService, minor: number) {
    return {
      id: minor >= 53 ? s.uuid : s.legacyId,
      binary: 'nova-compute',
      host: s.host,
      status: s.status,
      state: 'up',
      disabled_reason: s.disabled_reason,
    };
  }

  #listServices(q: URLSearchParams, minor: number) {
    return this.services
      .filter((s) => !q.get('host') || s.host === q.get('host'))
      .map((s) => this.#serviceJson(s, minor));
  }

  #hypervisorsDetail(q: URLSearchParams, minor: number): Reply {
    const pattern = q.get('hypervisor_hostname_pattern');
    const list = this.hypervisors.filter((h) => !pattern || h.hostname.includes(pattern));
    if (pattern && list.length === 0) {
      return [
        404,
        { itemNotFound: { code: 404, message: `No hypervisor matching '${pattern}' could be found.` } },
      ];
    }
    return [
      200,
      {
        hypervisors: list.map((h, i) => ({
          id: minor >= 53 ? `hv-${i}` : i,
          hypervisor_hostname: h.hostname,
          service: { id: this.service(h.host).uuid, host: h.host },
        })),
      },
    ];
  }

  /** Stamps `updated_at` on every server changed by the request just handled (Nova's clock). */
  #stampChanges(): void {
    for (const s of this.servers.values()) {
      const now = JSON.stringify([s.status, s.task_state, s.host]);
      if (s.stamp === now) continue;
      s.stamp = now;
      s.updatedAt = this.now() + (s.clockAheadMs ?? 0);
    }
  }

  #serverJson(s: FakeServer) {
    return {
      id: s.id,
      name: s.name,
      tenant_id: s.tenant_id,
      status: s.status,
      locked: s.locked ?? false,
      metadata: { ...s.metadata },
      ...(this.hideHost ? {} : { 'OS-EXT-SRV-ATTR:host': s.host }),
      'OS-EXT-STS:task_state': s.task_state,
      ...(s.updatedAt !== undefined
        ? { updated: new Date(s.updatedAt).toISOString().replace(/\.\d+Z$/, 'Z') }
        : {}),
      // like Nova: the fault is shown for a server in ERROR
      ...(s.status === 'ERROR' && s.fault ? { fault: { code: 500, message: s.fault } } : {}),
    };
  }

  #listServers(q: URLSearchParams): Reply {
    this.tick();
    this.#stampChanges();
    const host = q.get('host');
    const since =
      this.honourChangesSince && q.get('changes-since') ? Date.parse(q.get('changes-since')!) : undefined;
    // Without all_tenants Nova lists only the caller's project: exactly the old tool's bug.
    const all = q.get('all_tenants') === '1' || q.get('all_tenants') === 'true';
    const changed = (s: FakeServer) =>
      since === undefined ||
      (!this.missedByChanges.has(s.id) && (s.updatedAt ?? this.now()) >= Math.floor(since / 1000) * 1000);
    const matching = [...this.servers.values()]
      .filter((s) => (!host || s.host === host) && (all || s.tenant_id === 'project-admin') && changed(s))
      .sort((a, b) => a.id.localeCompare(b.id));
    const limit = Number(q.get('limit') ?? this.pageSize);
    const marker = q.get('marker');
    const start = marker ? matching.findIndex((s) => s.id === marker) + 1 : 0;
    const page = matching.slice(start, start + limit);
    const more = start + limit < matching.length;
    const last = page[page.length - 1];
    const next = new URLSearchParams({ all_tenants: '1', ...(host ? { host } : {}), limit: String(limit) });
    if (last) next.set('marker', last.id);
    return [
      200,
      {
        servers: page.map((s) => this.#serverJson(s)),
        ...(more
          ? { servers_links: [{ rel: 'next', href: `${OTHER_ENDPOINT}/servers/detail?${next.toString()}` }] }
          : {}),
      },
    ];
  }

  #action(id: string, body: Record<string, unknown>, _minor: number): Reply {
    const s = this.servers.get(id);
    if (!s) return [404, { itemNotFound: { code: 404, message: 'not found' } }];
    if ('confirmResize' in body) {
      if (s.status !== 'VERIFY_RESIZE')
        return [400, { badRequest: { code: 400, message: 'Instance has not been resized.' } }];
      const mig = this.migrations.find((x) => x.serverId === id && x.status === 'finished');
      // like Nova: only a `finished` migration can be confirmed; the rest is "not resized"
      if (!mig) return [400, { badRequest: { code: 400, message: 'Instance has not been resized.' } }];
      if (s.confirmLagTicks) {
        this.#setStatus(mig, 'confirming');
        mig.ticksLeft = s.confirmLagTicks;
        return [204];
      }
      s.status = mig.priorStatus;
      this.#setStatus(mig, 'confirmed');
      return [204];
    }
    const live = 'os-migrateLive' in body;
    if (!live && !('migrate' in body)) return [400, { badRequest: { code: 400, message: 'unknown action' } }];
    if (s.task_state !== null) {
      return [
        409,
        {
          conflictingRequest: {
            code: 409,
            message: `Cannot '${live ? 'os-migrateLive' : 'migrate'}' instance ${id} while it is in task_state ${s.task_state}`,
          },
        },
      ];
    }
    if (live && !['ACTIVE', 'PAUSED'].includes(s.status)) {
      return [
        409,
        {
          conflictingRequest: {
            code: 409,
            message: `Cannot 'os-migrateLive' instance ${id} while it is in vm_state stopped`,
          },
        },
      ];
    }
    const dest = this.services.find((x) => x.host !== s.host && x.status === 'enabled')?.host ?? s.host;
    this.migrations.push({
      id: ++this.#migrationCount,
      serverId: id,
      type: live ? 'live-migration' : 'migration',
      status: live && s.schedulingTicks ? 'accepted' : 'running',
      ...(live && s.schedulingTicks ? { schedulingLeft: s.schedulingTicks } : {}),
      source: s.host,
      dest,
      ticksLeft: s.hang ? Number.POSITIVE_INFINITY : (s.ticks ?? 2),
      priorStatus: s.status,
      createdAt: this.now(),
      updatedAt: this.now(),
    });
    s.task_state = live ? 'migrating' : 'resize_prep';
    s.status = live ? 'MIGRATING' : 'RESIZE';
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return [202];
  }

  #abort(id: string, migrationId: number, minor: number): Reply {
    if (minor < 24) return [404, { itemNotFound: { code: 404, message: 'not found' } }];
    const mig = this.migrations.find(
      (x) => x.id === migrationId && x.serverId === id && x.status === 'running',
    );
    const s = this.servers.get(id);
    if (!mig || !s) return [404, { itemNotFound: { code: 404, message: 'migration not found' } }];
    if (s.abortTooLate) {
      mig.ticksLeft = 1; // completes on the next tick all the same
    } else if (s.rollbackTicks) {
      mig.ending = 'cancelled';
      mig.ticksLeft = s.rollbackTicks;
    } else {
      this.#setStatus(mig, 'cancelled');
      s.status = mig.priorStatus;
      s.task_state = null;
      this.inFlight--;
    }
    return [202];
  }

  /** One step of every running migration (and of rollbacks and lagging confirms). */
  tick(): void {
    for (const mig of this.migrations) {
      if (mig.status === 'confirming') {
        if (--mig.ticksLeft > 0) continue;
        this.servers.get(mig.serverId)!.status = mig.priorStatus;
        this.#setStatus(mig, 'confirmed');
        continue;
      }
      if (mig.status === 'accepted') {
        // the scheduler picks a host; only then does the record become one Nova lists and aborts
        if (--mig.schedulingLeft! <= 0) this.#setStatus(mig, 'running');
        continue;
      }
      const rollingBackFailure = mig.status === 'error' && mig.ending === 'failed';
      if (mig.status !== 'running' && !rollingBackFailure) continue;
      if (mig.ending === 'stuck' || --mig.ticksLeft > 0) continue;
      const s = this.servers.get(mig.serverId)!;
      if (mig.ending === 'cancelled' || mig.ending === 'failed') {
        // a rollback ends: like Nova, task_state is reset before the record's final status
        this.inFlight--;
        s.task_state = null;
        s.status = mig.priorStatus;
        this.#setStatus(mig, mig.ending);
        continue;
      }
      if ((s.failAttempts ?? 0) > 0 || mig.dest === mig.source) {
        s.failAttempts = (s.failAttempts ?? 0) - 1;
        this.#setStatus(mig, 'error');
        if (s.faultOnFailure) {
          this.inFlight--;
          s.task_state = null;
          s.status = 'ERROR';
          s.fault = s.faultOnFailure;
          continue;
        }
        if (s.stuckOnFailure) {
          mig.ending = 'stuck';
          continue;
        }
        if (s.failRollbackTicks) {
          mig.ending = 'failed';
          mig.ticksLeft = s.failRollbackTicks;
          continue;
        }
        this.inFlight--;
        s.task_state = null;
        s.status = mig.priorStatus;
        continue;
      }
      this.inFlight--;
      s.task_state = null;
      s.host = mig.dest;
      if (mig.type === 'live-migration') {
        this.#setStatus(mig, 'completed');
        s.status = mig.priorStatus;
      } else {
        this.#setStatus(mig, 'finished');
        s.status = 'VERIFY_RESIZE';
      }
    }
  }
}

function reqId(): Record<string, string> {
  return { 'x-openstack-request-id': 'req-fake-1' };
}
