// Nova calls the harness makes to arrange and inspect the world (not drainer's code).
import { expectStatus, type Body, type Session } from './session.ts';
import { waitFor } from './wait.ts';

/** The microversion the harness reads with: service UUIDs (2.53), supported by every cloud since Pike. */
export const READ_MV = '2.53';
/** `host` in a server create request needs 2.74; `networks: "none"` needs 2.37. */
const BOOT_MV = '2.74';

/** What the project's own stack registers (test/functional/stack/seed.py). */
export const DEFAULT_IMAGE = 'drainer-guest';
export const DEFAULT_FLAVOR = 'drainer.guest';

export interface ServerView {
  id: string;
  name: string;
  status: string;
  taskState: string | null;
  host: string | null;
  projectId: string;
  fault?: string;
}

export interface ServiceView {
  id: string;
  host: string;
  status: 'enabled' | 'disabled';
  state: string;
  disabledReason: string | null;
}

export interface MigrationView {
  id: number;
  status: string;
  migrationType: string;
  sourceCompute: string | null;
  destCompute: string | null;
}

function toServer(s: Body): ServerView {
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    taskState: s['OS-EXT-STS:task_state'] ?? null,
    host: s['OS-EXT-SRV-ATTR:host'] ?? null,
    projectId: s.tenant_id,
    ...(s.fault?.message ? { fault: s.fault.message as string } : {}),
  };
}

export async function findImageId(s: Session, wanted?: string): Promise<string> {
  const res = expectStatus(
    await s.request('image', 'GET', '/v2/images', { searchParams: { limit: 100 } }),
    'list images',
    200,
  );
  const images: { id: string; name: string; status: string; size?: number }[] = res.body.images;
  const active = images.filter((i) => i.status === 'active');
  const pick = wanted
    ? active.find((i) => i.id === wanted || i.name === wanted)
    : (active.find((i) => i.name === DEFAULT_IMAGE) ??
      active.find((i) => i.name === 'fake-image') ??
      [...active].sort((a, b) => (a.size ?? 0) - (b.size ?? 0))[0]);
  if (!pick) throw new Error(`no active image ${wanted ?? `"${DEFAULT_IMAGE}"`} (set DRAINER_FT_IMAGE)`);
  return pick.id;
}

export async function findFlavorId(s: Session, wanted?: string): Promise<string> {
  const res = expectStatus(await s.request('compute', 'GET', '/flavors/detail'), 'list flavors', 200);
  const flavors: { id: string; name: string; ram: number }[] = res.body.flavors;
  const pick = wanted
    ? flavors.find((f) => f.id === wanted || f.name === wanted)
    : (flavors.find((f) => f.name === DEFAULT_FLAVOR) ?? [...flavors].sort((a, b) => a.ram - b.ram)[0]);
  if (!pick) throw new Error(`no flavor ${wanted ?? ''} (set DRAINER_FT_FLAVOR)`);
  return pick.id;
}

/** Boots a server pinned to `host` with no network; returns its id (still BUILD). */
export async function bootServer(
  s: Session,
  spec: { name: string; host: string; imageId: string; flavorId: string; availabilityZone?: string },
): Promise<string> {
  const res = await s.request('compute', 'POST', '/servers', {
    microversion: BOOT_MV,
    json: {
      server: {
        name: spec.name,
        imageRef: spec.imageId,
        flavorRef: spec.flavorId,
        networks: 'none',
        host: spec.host,
        ...(spec.availabilityZone ? { availability_zone: spec.availabilityZone } : {}),
      },
    },
  });
  return expectStatus(res, `boot ${spec.name} on ${spec.host}`, 202).body.server.id;
}

/** The server as an admin sees it, or undefined once it is gone. */
export async function getServer(admin: Session, id: string): Promise<ServerView | undefined> {
  const res = await admin.request('compute', 'GET', `/servers/${id}`, { microversion: READ_MV });
  if (res.status === 404) return undefined;
  return toServer(expectStatus(res, `get server ${id}`, 200).body.server);
}

export async function serversOnHost(admin: Session, host: string): Promise<ServerView[]> {
  const res = await admin.request('compute', 'GET', '/servers/detail', {
    microversion: READ_MV,
    searchParams: { all_tenants: 1, host },
  });
  return (expectStatus(res, `list servers on ${host}`, 200).body.servers as unknown[]).map(toServer);
}

/** Waits until the server is in `status` with no task running (ERROR fails fast with Nova's fault). */
export async function waitServer(
  admin: Session,
  id: string,
  status: string,
  timeoutMs = 300_000,
): Promise<ServerView> {
  let last: ServerView | undefined;
  return waitFor(
    async () => {
      last = await getServer(admin, id);
      if (!last) throw new Error(`server ${id} disappeared while waiting for ${status}`);
      if (last.status === 'ERROR' && status !== 'ERROR') {
        throw new Error(`server ${last.name} went ERROR: ${last.fault ?? 'no fault message'}`);
      }
      return last.status === status && last.taskState === null ? last : undefined;
    },
    { what: `server ${id} to be ${status}`, timeoutMs },
    () => JSON.stringify(last),
  );
}

export async function serverAction(s: Session, id: string, action: Record<string, unknown>): Promise<void> {
  const res = await s.request('compute', 'POST', `/servers/${id}/action`, {
    microversion: READ_MV,
    json: action,
  });
  expectStatus(res, `${Object.keys(action).join()} ${id}`, 202);
}

/** Deletes the server and waits until Nova answers 404 for it (the host is empty again). */
export async function deleteServer(admin: Session, id: string): Promise<void> {
  const res = await admin.request('compute', 'DELETE', `/servers/${id}`);
  if (res.status === 404) return;
  if (res.status === 409) {
    // still migrating/resizing: reset to a deletable state is admin-only and heavy; wait instead
    await waitFor(async () => ((await getServer(admin, id))?.taskState ?? null) === null || undefined, {
      what: `server ${id} to finish its task before delete`,
    });
    expectStatus(await admin.request('compute', 'DELETE', `/servers/${id}`), `delete server ${id}`, 204, 404);
  } else {
    expectStatus(res, `delete server ${id}`, 204);
  }
  await waitFor(async () => ((await getServer(admin, id)) === undefined ? true : undefined), {
    what: `server ${id} to be deleted`,
  });
}

export async function computeService(admin: Session, host: string): Promise<ServiceView> {
  const res = await admin.request('compute', 'GET', '/os-services', {
    microversion: READ_MV,
    searchParams: { binary: 'nova-compute', host },
  });
  const svc = expectStatus(res, `get nova-compute service of ${host}`, 200).body.services[0];
  if (!svc) throw new Error(`no nova-compute service on host ${host}`);
  return {
    id: svc.id,
    host: svc.host,
    status: svc.status,
    state: svc.state,
    disabledReason: svc.disabled_reason,
  };
}

/** Enables or disables a compute service by hand (2.53: by UUID, with a reason). */
export async function setService(
  admin: Session,
  host: string,
  enabled: boolean,
  reason?: string,
): Promise<ServiceView> {
  const svc = await computeService(admin, host);
  const json = enabled
    ? { status: 'enabled' }
    : { status: 'disabled', disabled_reason: reason ?? 'functional test' };
  const res = await admin.request('compute', 'PUT', `/os-services/${svc.id}`, {
    microversion: READ_MV,
    json,
  });
  expectStatus(res, `${enabled ? 'enable' : 'disable'} ${host}`, 200);
  return computeService(admin, host);
}

/** Every migration Nova recorded for the server, newest first. */
export async function migrationsOf(admin: Session, serverId: string): Promise<MigrationView[]> {
  const res = await admin.request('compute', 'GET', '/os-migrations', {
    microversion: '2.59',
    searchParams: { instance_uuid: serverId },
  });
  return (expectStatus(res, `migrations of ${serverId}`, 200).body.migrations as Body[]).map((m) => ({
    id: m.id,
    status: m.status,
    migrationType: m.migration_type,
    sourceCompute: m.source_compute,
    destCompute: m.dest_compute,
  }));
}
