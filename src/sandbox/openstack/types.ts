// Public shapes of the sandbox Keystone + Nova (see brief/interfaces.md, part D).
import type { Clock } from '../clock.ts';

export interface HostSpec {
  /** nova-compute service host. */
  name: string;
  /** Hypervisor (compute node) name; real clouds often use the FQDN here. Default: `name`. */
  hypervisorHostname?: string;
  /** Nova's `max_concurrent_live_migrations` on this host as a source (default 1). */
  maxConcurrentLiveMigrations?: number;
  /** Live-migration bandwidth off this host, MB/s (default: each server moves in its migrationMs). */
  migrationMbPerSecond?: number;
  /** Nova's live_migration_completion_timeout, seconds per GiB (scaled; default 0 = none). */
  completionTimeoutSecondsPerGiB?: number;
  /** Nova's live_migration_timeout_action (default abort). */
  timeoutAction?: 'abort' | 'force_complete';
  ramMb?: number;
  /** Physical cores (Placement VCPU total and max_unit; default 16) and local disk (default 1000 GB). */
  vcpus?: number;
  diskGb?: number;
  disabled?: { reason: string };
}

export type ServerStatus =
  'ACTIVE' | 'SHUTOFF' | 'PAUSED' | 'ERROR' | 'SUSPENDED' | 'RESCUE' | 'SHELVED_OFFLOADED' | 'VERIFY_RESIZE';

export interface ServerSpec {
  id?: string;
  name: string;
  /** Project id; the names "admin" and "demo" mean the projects of the built-in users. */
  projectId: string;
  host: string;
  status?: ServerStatus;
  ramMb?: number;
  /** Flavor vCPUs (default 1) and root disk in GB (default 1). */
  vcpus?: number;
  diskGb?: number;
  /** Booted from a volume: no local root disk (image "" in the API, no DISK_GB in Placement). */
  bootFromVolume?: boolean;
  /** Simulated duration of the memory copy of a live migration (default 3000). */
  migrationMs?: number;
  /** How fast the guest dirties its memory, MB/s (default 0); near the link's bandwidth it never converges. */
  dirtyMbPerSecond?: number;
  /** How long its guest takes to power off cleanly (default: timings.shutdownMs, Nova's shutdown_timeout). */
  shutdownMs?: number;
  locked?: boolean;
  /** Server metadata (keys as Nova allows: ^[a-zA-Z0-9-_:. ]{1,255}$), e.g. drainer.dev:maintenance. */
  metadata?: Record<string, string>;
}

export interface NovaFaults {
  /** Share 0..1 of Nova requests answered 503 (seeded, repeatable). */
  errorRate: number;
  /** Added to every Nova response, in simulated ms. */
  latencyMs: number;
  /** True: a live migration of this server fails (migration `error`, server ACTIVE on its source). */
  failMigrations: (serverId: string) => boolean;
  /** True: a live migration of this server never completes (abort still works). */
  hangMigrations: (serverId: string) => boolean;
  /** A policy that hides OS-EXT-SRV-ATTR:* (the host) from every caller, admin included. */
  hideHost: boolean;
  /** How far ahead the clock that stamps this server's `updated` runs (ms; 0: Nova's own). */
  clockAheadMs: (serverId: string) => number;
  /** True: apply this request, then reset the connection before the answer goes out. */
  dropAnswer: (method: string, path: string) => boolean;
  /** A message: a live migration of this server fails and leaves it in ERROR with that fault. */
  errorMigrations: (serverId: string) => string | undefined;
  /** True: the migration record ends `completed` but the server stays MIGRATING on its source. */
  completeWithoutMove: (serverId: string) => boolean;
  /**
   * An answer instead of this request, nothing applied (as Nova's API refusing a start with a 409
   * while the host's nova-compute is still coming up, or a 500 from a broken conductor). `path` is
   * after /compute.
   */
  refuse: (method: string, path: string, body: unknown) => { status: number; message: string } | undefined;
}

/** Simulated durations of the steps around a migration (simulated ms). */
export interface ComputeTimings {
  /** accepted → scheduled (queued, or error without a destination); the real one takes 0.5–1.5 s. Default 1000. */
  scheduleMs: number;
  /** preparing → running. Default 300. */
  prepareMs: number;
  /**
   * Server already on the destination, record still `running` and the source's slot still held, as
   * in Nova's _post_live_migration: the host switches (post_live_migration_at_destination), then the
   * source audits its resources before it marks the record `completed`, seconds on a busy host.
   * Default 3000.
   */
  postMigrationMs: number;
  /** Abort → cancelled. Default 200. */
  abortMs: number;
  /** confirmResize / revertResize finishing. Default 200. */
  resizeFinishMs: number;
  /**
   * os-stop (and shelve) of a guest: powering-off until it has shut down. Nova waits up to
   * shutdown_timeout (60 s by default) for a clean shutdown. Default 60000.
   */
  shutdownMs: number;
  /** os-start, unshelve, the offload: powering-on until the guest runs. Default 5000. */
  powerOnMs: number;
  /** shelve: the snapshot and its upload. Default 10000. */
  snapshotMs: number;
  /** Nova's shelved_offload_time: 0 offloads at once (Nova's default), -1 never. Default 0. */
  shelvedOffloadMs: number;
  /** DELETE /servers/{id}: deleting until DELETED. Default 1000. */
  deleteMs: number;
}

export interface StartOpenStackOptions {
  clock: Clock;
  host?: string;
  port?: number;
  region?: string;
  maxMicroversion?: string;
  tokenTtlSeconds?: number;
  hosts: HostSpec[];
  servers: ServerSpec[];
  faults?: Partial<NovaFaults>;
  /** Seed of the fault RNG (default 1). */
  seed?: number;
  /** Nova's osapi_max_limit: page size when no (or a larger) limit is given. Default 1000. */
  maxLimit?: number;
  timings?: Partial<ComputeTimings>;
  /** false: no Placement in the catalog (a very old cloud). Default true. */
  placement?: boolean;
  /** Server groups by server name (policy "anti-affinity", "affinity", "soft-anti-affinity" …). */
  serverGroups?: { name: string; policy: string; members: string[]; projectId?: string }[];
}

export interface Credentials {
  username: string;
  password: string;
  project: string;
  domain: string;
  userId: string;
  projectId: string;
}

export interface AppCredential {
  id: string;
  name: string;
  secret: string;
  userId: string;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  at: number;
  microversion?: string;
  /** The caller's User-Agent (drainer's client says "drainer"). */
  userAgent?: string;
  /** POST /servers/{id}/action: the action's name (os-stop, os-start, migrate …). */
  action?: string;
}

export type MigrationType = 'live-migration' | 'migration' | 'resize';

export interface MigrationView {
  id: number;
  uuid: string;
  serverId: string;
  type: MigrationType;
  status: string;
  sourceHost: string;
  destHost: string | null;
  createdAt: number;
  updatedAt: number;
  /** When the server began to run on the destination (the sandbox knows; Nova's API does not say). */
  landedAt?: number;
}

export interface ServerView {
  id: string;
  name: string;
  projectId: string;
  host: string;
  hypervisorHostname: string;
  status: string;
  vmState: string;
  taskState: string | null;
  ramMb: number;
  locked: boolean;
  /** Its metadata as its owner set it (drainer.dev:maintenance among them). */
  metadata: Record<string, string>;
  /** epoch ms (Nova's `created`). */
  createdAt: number;
  /** epoch ms when an unshelve placed it on its host (no migration says so). */
  placedAt?: number;
  /** Its last shelve offload (it left its host with no migration). */
  offloaded?: Offload;
}

/** A shelve offload: the host the server left, when (epoch ms), and since when it had been there (undefined: its creation). */
export interface Offload {
  readonly from: string;
  readonly at: number;
  readonly since?: number;
}

export interface ServiceView {
  id: number;
  uuid: string;
  binary: string;
  host: string;
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  forcedDown: boolean;
}

export type StateEvent =
  | { kind: 'server'; server: ServerView }
  | { kind: 'migration'; migration: MigrationView }
  | { kind: 'service'; service: ServiceView };

/** Read access (and a few scenario mutators) for tests, controllers and the demo. */
export interface OpenStackState {
  servers(): ServerView[];
  server(id: string): ServerView | undefined;
  serversOnHost(host: string): ServerView[];
  services(): ServiceView[];
  service(host: string, binary?: string): ServiceView | undefined;
  migrations(serverId?: string): MigrationView[];
  /** os-migrateLive + migrate requests received for a server (any outcome). */
  migrateCalls(serverId: string): number;
  addServer(spec: ServerSpec): ServerView;
  /** Server groups as created (id, name, policy, member ids). */
  serverGroups(): { id: string; name: string; policy: string; members: string[] }[];
  /** A compute host that comes (back) into service: service, hypervisor and Placement provider. */
  addHost(spec: HostSpec): void;
  /** Notified after every change of a server, migration or service. Returns an unsubscribe. */
  subscribe(listener: (event: StateEvent) => void): () => void;
}

export interface OpenStackSandbox {
  identityUrl: string;
  computeUrl: string;
  /** Undefined when started with placement: false. */
  placementUrl: string | undefined;
  region: string;
  credentials: { admin: Credentials; demo: Credentials; appCredential: AppCredential };
  state: OpenStackState;
  requestLog: RequestLogEntry[];
  faults: NovaFaults;
  close(): Promise<void>;
}
