// The contract script: every kind of request drainer makes (and the failure answers it branches
// on), run the same way against one side (the real cloud or the sandbox emulation). It records
// status codes, response shapes and the few values drainer's logic depends on.
import type { CloudEnv } from './cloud-env.ts';
import { authBody, http, identityUrl, Session, type ApiResponse } from './session.ts';
import { capacityCalls } from './placement-contract.ts';
import { shapeOf, type Shape } from './shape.ts';
import { waitFor } from './wait.ts';

export interface ContractSide {
  label: string;
  admin: CloudEnv;
  member: CloudEnv;
  sourceHost: string;
  targetHost: string;
  /** An empty anti-affinity server group (the capacity check reads groups). */
  serverGroup?: string;
  /** Servers on the source host: four ACTIVE, one SHUTOFF. */
  servers: { live: string; legacy: string; abort: string; fail: string; shutoff: string };
}

export interface Observation {
  call: string;
  status: number;
  shape: Shape;
  /** Facts drainer's logic depends on (final states), compared by value. */
  facts?: Record<string, unknown>;
}

const WAIT = { timeoutMs: 240_000, intervalMs: 250 };

export async function runContract(side: ContractSide): Promise<Observation[]> {
  const obs: Observation[] = [];
  const admin = await Session.open(side.admin);
  const member = await Session.open(side.member);
  const compute = admin.endpoint('compute');
  const note = (call: string, res: ApiResponse, facts?: Record<string, unknown>) => {
    obs.push({ call, status: res.status, shape: shapeOf(res.body), ...(facts ? { facts } : {}) });
    return res;
  };
  const nova = (mv: string, method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, json?: unknown) =>
    admin.request('compute', method, path, { microversion: mv, ...(json === undefined ? {} : { json }) });
  const { sourceHost: src, targetHost: dst, servers: s } = side;

  await keystoneCalls(side, note);
  const version = await http.get(compute);
  obs.push({
    call: 'GET <compute endpoint> (no token)',
    status: version.statusCode,
    shape: shapeOf(JSON.parse(version.body)),
  });

  // host mapping and services, both API generations
  note(
    'GET os-services host=src 2.93',
    await nova('2.93', 'GET', `/os-services?binary=nova-compute&host=${src}`),
  );
  note(
    'GET os-services host=src 2.1',
    await nova('2.1', 'GET', `/os-services?binary=nova-compute&host=${src}`),
  );
  note(
    'GET os-services unknown host',
    await nova('2.93', 'GET', '/os-services?binary=nova-compute&host=no-such-host'),
  );
  note(
    'GET os-hypervisors pattern 2.93',
    await nova('2.93', 'GET', `/os-hypervisors?hypervisor_hostname_pattern=${src}`),
  );
  note('GET os-hypervisors search 2.1', await nova('2.1', 'GET', `/os-hypervisors/${src}/search`));
  const svc = (await nova('2.93', 'GET', `/os-services?binary=nova-compute&host=${src}`)).body.services[0];
  note(
    'PUT os-services/{uuid} disable 2.93',
    await nova('2.93', 'PUT', `/os-services/${svc.id}`, {
      status: 'disabled',
      disabled_reason: 'drainer: contract',
    }),
  );
  note(
    'PUT os-services/{uuid} enable 2.93',
    await nova('2.93', 'PUT', `/os-services/${svc.id}`, { status: 'enabled' }),
  );
  note(
    'PUT os-services/disable-log-reason 2.1',
    await nova('2.1', 'PUT', '/os-services/disable-log-reason', {
      host: src,
      binary: 'nova-compute',
      disabled_reason: 'drainer: contract',
    }),
  );
  note(
    'PUT os-services/enable 2.1',
    await nova('2.1', 'PUT', '/os-services/enable', { host: src, binary: 'nova-compute' }),
  );

  await capacityCalls(admin, side, note);

  // listing, with pagination
  note(
    'GET servers/detail all_tenants host 2.93',
    await nova('2.93', 'GET', `/servers/detail?all_tenants=1&host=${src}`),
  );
  note(
    'GET servers/detail all_tenants host 2.1',
    await nova('2.1', 'GET', `/servers/detail?all_tenants=1&host=${src}`),
  );
  const page = note(
    'GET servers/detail limit=2',
    await nova('2.93', 'GET', `/servers/detail?all_tenants=1&host=${src}&limit=2`),
  );
  obs[obs.length - 1]!.facts = { hasNextLink: Array.isArray(page.body.servers_links) };
  note('GET servers/{id} 2.93', await nova('2.93', 'GET', `/servers/${s.live}`));

  // live migration: accepted, conflicts while in flight, completes on the target
  const live = { 'os-migrateLive': { host: null, block_migration: 'auto' } };
  note('POST os-migrateLive 2.93', await nova('2.93', 'POST', `/servers/${s.live}/action`, live));
  note(
    'POST os-migrateLive again (in flight)',
    await nova('2.93', 'POST', `/servers/${s.live}/action`, live),
  );
  await running(admin, s.live, note);
  await settled(admin, s.live, dst, 'live migration completes');
  // the record may still say running for a moment after the server moved (and carries `links`
  // only while in progress): compare it once it has settled
  await waitFor(
    async () => ((await lastMigration(admin, s.live)).status === 'completed' ? true : undefined),
    {
      what: `${side.label}: live migration record completed`,
      ...WAIT,
    },
  );
  note(
    'GET os-migrations instance_uuid 2.93',
    await nova('2.93', 'GET', `/os-migrations?instance_uuid=${s.live}&migration_type=live-migration`),
  );

  // abort of a running migration
  note('POST os-migrateLive (to abort)', await nova('2.93', 'POST', `/servers/${s.abort}/action`, live));
  const mid = await running(admin, s.abort);
  note(
    'DELETE servers/{id}/migrations/{mid}',
    await nova('2.93', 'DELETE', `/servers/${s.abort}/migrations/${mid}`),
  );
  await settled(admin, s.abort, src, 'aborted migration');
  await waitFor(
    async () => ((await lastMigration(admin, s.abort)).status === 'cancelled' ? true : undefined),
    { what: `${side.label}: migration cancelled`, ...WAIT },
  );
  obs.push({ call: 'aborted migration record', status: 0, shape: 'n/a', facts: { status: 'cancelled' } });

  // asynchronous failure (2.34+): no destination left
  const dstSvc = (await nova('2.93', 'GET', `/os-services?binary=nova-compute&host=${dst}`)).body.services[0];
  await nova('2.93', 'PUT', `/os-services/${dstSvc.id}`, {
    status: 'disabled',
    disabled_reason: 'contract: no destination',
  });
  try {
    note(
      'POST os-migrateLive (no destination)',
      await nova('2.93', 'POST', `/servers/${s.fail}/action`, live),
    );
    const failed = await waitFor(
      async () => {
        const m = await lastMigration(admin, s.fail);
        return ['error', 'failed'].includes(m.status) ? m.status : undefined;
      },
      { what: `${side.label}: migration error`, ...WAIT },
    );
    await settled(admin, s.fail, src, 'failed migration');
    obs.push({ call: 'failed migration record', status: 0, shape: 'n/a', facts: { status: failed } });
  } finally {
    await nova('2.93', 'PUT', `/os-services/${dstSvc.id}`, { status: 'enabled' });
  }

  // legacy live migration body (< 2.25)
  note(
    'POST os-migrateLive 2.1',
    await nova('2.1', 'POST', `/servers/${s.legacy}/action`, {
      'os-migrateLive': { host: null, block_migration: false, disk_over_commit: false },
    }),
  );
  await settled(admin, s.legacy, dst, 'legacy live migration completes');

  // stopped server: live migration refused, cold migration + confirm
  note('POST os-migrateLive SHUTOFF', await nova('2.93', 'POST', `/servers/${s.shutoff}/action`, live));
  note('POST migrate SHUTOFF', await nova('2.93', 'POST', `/servers/${s.shutoff}/action`, { migrate: null }));
  await waitFor(
    async () => ((await server(admin, s.shutoff)).status === 'VERIFY_RESIZE' ? true : undefined),
    { what: `${side.label}: VERIFY_RESIZE`, ...WAIT },
  );
  note('GET servers/{id} VERIFY_RESIZE', await nova('2.93', 'GET', `/servers/${s.shutoff}`));
  note(
    'POST confirmResize',
    await nova('2.93', 'POST', `/servers/${s.shutoff}/action`, { confirmResize: null }),
  );
  await settled(admin, s.shutoff, dst, 'cold migration confirmed', 'SHUTOFF');

  // what a non-admin, a missing token and an unsupported microversion get
  note(
    'GET os-services as member',
    await member.request('compute', 'GET', '/os-services?binary=nova-compute', { microversion: '2.93' }),
  );
  note(
    'GET servers/detail all_tenants as member',
    await member.request('compute', 'GET', '/servers/detail?all_tenants=1', { microversion: '2.93' }),
  );
  const noToken = await http.get(`${compute}/os-services`);
  obs.push({ call: 'GET os-services without token', status: noToken.statusCode, shape: 'n/a' });
  note('GET servers microversion 2.999', await nova('2.999', 'GET', '/servers/detail'));
  return obs;
}

async function keystoneCalls(
  side: ContractSide,
  note: (call: string, res: ApiResponse) => ApiResponse,
): Promise<void> {
  const url = `${identityUrl(side.admin.auth.authUrl)}/auth/tokens`;
  const ok = await http.post(url, { json: authBody(side.admin.auth) });
  note('POST auth/tokens password', {
    status: ok.statusCode,
    body: JSON.parse(ok.body),
    headers: ok.headers,
  });
  const hasToken = typeof ok.headers['x-subject-token'] === 'string';
  const bad = await http.post(url, { json: authBody({ ...side.admin.auth, password: 'wrong-password' }) });
  note('POST auth/tokens wrong password', {
    status: bad.statusCode,
    body: JSON.parse(bad.body),
    headers: bad.headers,
  });
  if (!hasToken) throw new Error(`${side.label}: no X-Subject-Token header`);
}

interface Srv {
  status: string;
  task: string | null;
  host: string;
}

async function server(s: Session, id: string): Promise<Srv> {
  const b = (await s.request('compute', 'GET', `/servers/${id}`, { microversion: '2.93' })).body.server;
  return { status: b.status, task: b['OS-EXT-STS:task_state'] ?? null, host: b['OS-EXT-SRV-ATTR:host'] };
}

async function lastMigration(s: Session, id: string): Promise<{ status: string }> {
  const res = await s.request('compute', 'GET', `/os-migrations?instance_uuid=${id}`, {
    microversion: '2.93',
  });
  return res.body.migrations[0] ?? { status: 'none' };
}

/** Waits for an in-progress migration to show as running; notes the first non-empty listing. */
async function running(
  s: Session,
  id: string,
  note?: (call: string, res: ApiResponse) => ApiResponse,
): Promise<number> {
  return waitFor(
    async () => {
      const res = await s.request('compute', 'GET', `/servers/${id}/migrations`, { microversion: '2.93' });
      const m = res.body.migrations?.[0];
      if (m && m.status === 'running') {
        note?.('GET servers/{id}/migrations (running)', res);
        return m.id as number;
      }
      return undefined;
    },
    { what: `migration of ${id} running`, ...WAIT },
  );
}

/** Waits for the server's final state: reaching it is the assertion (a side that never does fails). */
async function settled(s: Session, id: string, host: string, what: string, status = 'ACTIVE'): Promise<void> {
  await waitFor(
    async () => {
      const now = await server(s, id);
      return now.task === null && now.host === host && now.status === status ? true : undefined;
    },
    { what: `${what} (${id} ${status} on ${host})`, ...WAIT },
  );
}
