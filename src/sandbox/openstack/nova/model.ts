// Nova's data in memory: services, compute nodes, servers, migrations; the status that the
// API shows is derived from vm_state + task_state exactly as Nova's state map does.
import type { Clock } from '../../clock.ts';
import type {
  HostSpec,
  MigrationType,
  MigrationView,
  ServerSpec,
  ServerView,
  ServiceView,
  StateEvent,
} from '../types.ts';
import { hexId, uuid } from '../ids.ts';

export type { ComputeNode, Flavor, InstanceAction, Migration, Server, ServerGroup, Service } from './rows.ts';
import type { ComputeNode, InstanceAction, Migration, Server, ServerGroup, Service } from './rows.ts';

/** Statuses from which the server runs on the destination (a resize's confirm comes later). */
const LANDED = new Set(['post-migrating', 'finished', 'completed', 'confirmed', 'done']);

/** Statuses in which Nova lists a live migration under /servers/{id}/migrations. */
export const IN_PROGRESS = new Set(['queued', 'preparing', 'running', 'post-migrating']);

const SPEC_STATES: Record<string, [vmState: string, powerState: number]> = {
  ACTIVE: ['active', 1],
  SHUTOFF: ['stopped', 4],
  PAUSED: ['paused', 3],
  ERROR: ['error', 0],
  SUSPENDED: ['suspended', 7],
  RESCUE: ['rescued', 1],
  SHELVED_OFFLOADED: ['shelved_offloaded', 4],
  VERIFY_RESIZE: ['resized', 1],
};

const RESIZE_TASKS = new Set(['resize_prep', 'resize_migrating', 'resize_migrated', 'resize_finish']);

/** Deleted: shown only to a listing with changes-since (status DELETED), as Nova does. */
export const isDeleted = (s: Server): boolean => s.vmState === 'deleted';

export function serverStatus(vmState: string, taskState: string | null): string {
  if (taskState === 'resize_reverting' && ['active', 'stopped', 'resized'].includes(vmState))
    return 'REVERT_RESIZE';
  if (taskState !== null && RESIZE_TASKS.has(taskState) && (vmState === 'active' || vmState === 'stopped'))
    return 'RESIZE';
  if (taskState === 'migrating' && (vmState === 'active' || vmState === 'paused')) return 'MIGRATING';
  const map: Record<string, string> = {
    active: 'ACTIVE',
    stopped: 'SHUTOFF',
    paused: 'PAUSED',
    error: 'ERROR',
    suspended: 'SUSPENDED',
    rescued: 'RESCUE',
    shelved: 'SHELVED',
    shelved_offloaded: 'SHELVED_OFFLOADED',
    deleted: 'DELETED',
    resized: 'VERIFY_RESIZE',
    building: 'BUILD',
  };
  return map[vmState] ?? 'UNKNOWN';
}

export class NovaModel {
  readonly services: Service[] = [];
  readonly nodes: ComputeNode[] = [];
  readonly servers = new Map<string, Server>();
  readonly migrations: Migration[] = [];
  readonly migrateCalls = new Map<string, number>();
  readonly serverGroups: ServerGroup[] = [];
  /** Each server's action log, oldest first (kept after a delete, as Nova keeps it). */
  readonly actions = new Map<string, InstanceAction[]>();
  readonly #listeners = new Set<(e: StateEvent) => void>();
  readonly #clock: Clock;
  #nextServiceId = 1;
  #nextMigrationId = 1;
  #nextInstance = 1;
  /** The `clock ahead` fault: how far the clock stamping a server's `updated` runs fast. */
  clockAhead: (serverId: string) => number = () => 0;

  constructor(clock: Clock) {
    this.#clock = clock;
    // The control-plane services every deployment lists next to nova-compute.
    this.#addService('nova-scheduler', 'controller', 'internal');
    this.#addService('nova-conductor', 'controller', 'internal');
  }

  now(): number {
    return this.#clock.now();
  }

  #addService(binary: string, host: string, zone: string): Service {
    const svc: Service = {
      id: this.#nextServiceId++,
      uuid: uuid(),
      binary,
      host,
      zone,
      status: 'enabled',
      disabledReason: null,
      forcedDown: false,
      updatedAt: this.now(),
    };
    this.services.push(svc);
    return svc;
  }

  addHost(spec: HostSpec): void {
    const svc = this.#addService('nova-compute', spec.name, 'nova');
    if (spec.disabled) {
      svc.status = 'disabled';
      svc.disabledReason = spec.disabled.reason;
    }
    this.nodes.push({
      id: this.nodes.length + 1,
      uuid: uuid(),
      hostname: spec.hypervisorHostname ?? spec.name,
      serviceHost: spec.name,
      ramMb: spec.ramMb ?? 65536,
      vcpus: spec.vcpus ?? 16,
      diskGb: spec.diskGb ?? 1000,
      maxConcurrentLiveMigrations: spec.maxConcurrentLiveMigrations ?? 1,
      migrationMbPerSecond: spec.migrationMbPerSecond,
      completionTimeoutSecondsPerGiB: spec.completionTimeoutSecondsPerGiB ?? 0,
      timeoutAction: spec.timeoutAction ?? 'abort',
    });
  }

  addServer(spec: ServerSpec, tenantId: string, userId: string): Server {
    const [vmState, powerState] = SPEC_STATES[spec.status ?? 'ACTIVE'] ?? ['active', 1];
    const node = this.nodeOfHost(spec.host);
    // Sorting by created_at needs distinct times: each server is a millisecond younger.
    const created = this.now() + this.servers.size;
    const offloaded = vmState === 'shelved_offloaded';
    const id = spec.id ?? uuid();
    const server: Server = {
      id,
      name: spec.name,
      tenantId,
      userId,
      host: offloaded ? null : spec.host,
      node: offloaded ? null : (node?.hostname ?? spec.host),
      vmState,
      taskState: null,
      powerState,
      ramMb: spec.ramMb ?? 512,
      vcpus: spec.vcpus ?? 1,
      diskGb: spec.diskGb ?? 1,
      bootFromVolume: spec.bootFromVolume ?? false,
      migrationMs: spec.migrationMs ?? 3000,
      dirtyMbPerSecond: spec.dirtyMbPerSecond ?? 0,
      ...(spec.shutdownMs !== undefined ? { shutdownMs: spec.shutdownMs } : {}),
      locked: spec.locked ?? false,
      createdAt: created,
      updatedAt: created + this.clockAhead(id),
      instanceName: `instance-${(this.#nextInstance++).toString(16).padStart(8, '0')}`,
      reservationId: `r-${hexId().slice(0, 8)}`,
      metadata: { ...spec.metadata },
    };
    if (vmState === 'resized') {
      server.preResizeVmState = 'active';
      const m = this.newMigration(server, 'migration', 'finished');
      m.destCompute = spec.host;
      m.destNode = server.node;
    }
    this.servers.set(server.id, server);
    this.recordAction(server.id, {
      action: 'create',
      requestId: `req-${uuid()}`,
      userId,
      projectId: tenantId,
      startTime: created,
    });
    this.emit({ kind: 'server', server: this.serverView(server) });
    return server;
  }

  recordAction(serverId: string, action: InstanceAction): void {
    this.actions.set(serverId, [...(this.actions.get(serverId) ?? []), action]);
  }

  computeService(host: string): Service | undefined {
    return this.services.find((s) => s.binary === 'nova-compute' && s.host === host);
  }

  nodeOfHost(host: string): ComputeNode | undefined {
    return this.nodes.find((n) => n.serviceHost === host);
  }

  newMigration(server: Server, type: MigrationType, status: string): Migration {
    const now = this.now();
    const m: Migration = {
      id: this.#nextMigrationId++,
      uuid: uuid(),
      instanceUuid: server.id,
      type,
      status,
      sourceCompute: server.host ?? '',
      sourceNode: null,
      destCompute: null,
      destNode: null,
      userId: server.userId,
      projectId: server.tenantId,
      createdAt: now,
      updatedAt: now,
    };
    this.migrations.push(m);
    this.emit({ kind: 'migration', migration: migrationView(m) });
    return m;
  }

  /** RAM not taken by servers on the host nor claimed by migrations heading there. */
  freeRamMb(host: string): number {
    const node = this.nodeOfHost(host);
    if (!node) return 0;
    let used = 0;
    for (const s of this.servers.values()) if (s.host === host && !isDeleted(s)) used += s.ramMb;
    for (const m of this.migrations) {
      if (m.destCompute !== host || m.sourceCompute === host) continue;
      if (!['accepted', 'queued', 'preparing', 'running', 'pre-migrating', 'migrating'].includes(m.status))
        continue;
      const s = this.servers.get(m.instanceUuid);
      if (s && s.host !== host) used += s.ramMb;
    }
    return node.ramMb - used;
  }

  setServer(server: Server, changes: Partial<Server>): void {
    Object.assign(server, changes, { updatedAt: this.now() + this.clockAhead(server.id) });
    this.emit({ kind: 'server', server: this.serverView(server) });
  }

  setMigration(m: Migration, changes: Partial<Migration>): void {
    Object.assign(m, changes, { updatedAt: this.now() });
    if (m.landedAt === undefined && m.status !== undefined && LANDED.has(m.status)) m.landedAt = m.updatedAt;
    this.emit({ kind: 'migration', migration: migrationView(m) });
  }

  setService(svc: Service, changes: Partial<Service>): void {
    Object.assign(svc, changes, { updatedAt: this.now() });
    this.emit({ kind: 'service', service: serviceView(svc) });
  }

  subscribe(listener: (e: StateEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(e: StateEvent): void {
    for (const l of this.#listeners) {
      try {
        l(e);
      } catch {
        // a listener's bug must not break the emulated cloud
      }
    }
  }

  serverView(s: Server): ServerView {
    return {
      id: s.id,
      name: s.name,
      projectId: s.tenantId,
      host: s.host ?? '',
      hypervisorHostname: s.node ?? '',
      status: serverStatus(s.vmState, s.taskState),
      vmState: s.vmState,
      taskState: s.taskState,
      ramMb: s.ramMb,
      locked: s.locked,
      metadata: { ...s.metadata },
      createdAt: s.createdAt,
      ...(s.placedAt !== undefined ? { placedAt: s.placedAt } : {}),
      ...(s.offloaded ? { offloaded: { ...s.offloaded } } : {}),
    };
  }
}

export function migrationView(m: Migration): MigrationView {
  return {
    id: m.id,
    uuid: m.uuid,
    serverId: m.instanceUuid,
    type: m.type,
    status: m.status,
    sourceHost: m.sourceCompute,
    destHost: m.destCompute,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    ...(m.landedAt !== undefined ? { landedAt: m.landedAt } : {}),
  };
}

export function serviceView(s: Service): ServiceView {
  return {
    id: s.id,
    uuid: s.uuid,
    binary: s.binary,
    host: s.host,
    status: s.status,
    disabledReason: s.disabledReason,
    forcedDown: s.forcedDown,
  };
}
