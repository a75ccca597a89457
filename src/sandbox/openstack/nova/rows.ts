// The rows of the sandbox Nova's memory, as Nova's own tables hold them (model.ts keeps them).
import type { MigrationType, Offload } from '../types.ts';

export interface Service {
  id: number;
  uuid: string;
  binary: string;
  host: string;
  zone: string;
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  forcedDown: boolean;
  updatedAt: number;
}

export interface ComputeNode {
  id: number;
  uuid: string;
  hostname: string;
  serviceHost: string;
  ramMb: number;
  vcpus: number;
  diskGb: number;
  maxConcurrentLiveMigrations: number;
  /** Live-migration bandwidth off this host, MB/s; unset: each server moves in its migrationMs. */
  migrationMbPerSecond: number | undefined;
  /** Nova's live_migration_completion_timeout (s per GiB of memory; 0: none) and its action. */
  completionTimeoutSecondsPerGiB: number;
  timeoutAction: 'abort' | 'force_complete';
}

export interface Server {
  id: string;
  name: string;
  tenantId: string;
  userId: string;
  host: string | null;
  node: string | null;
  vmState: string;
  taskState: string | null;
  powerState: number;
  ramMb: number;
  vcpus: number;
  diskGb: number;
  bootFromVolume: boolean;
  migrationMs: number;
  /** How fast the guest rewrites its memory, MB/s (0: idle). */
  dirtyMbPerSecond: number;
  /** How long its guest takes to power off cleanly (unset: the host's shutdown_timeout, timings.shutdownMs). */
  shutdownMs?: number;
  locked: boolean;
  createdAt: number;
  updatedAt: number;
  /** When an unshelve's claim put it on its host (it was offloaded, on no host, before). */
  placedAt?: number;
  /** Its last shelve offload: the host it left, when, and since when it had been there (its placedAt then). */
  offloaded?: Offload;
  instanceName: string;
  reservationId: string;
  /** The fault Nova shows for a server in ERROR (`fault.message`). */
  fault?: string;
  /** The server's metadata (key → string), as GET /servers/{id}/metadata shows it. */
  metadata: Record<string, string>;
  /** vm_state to go back to after a cold migration is confirmed or reverted. */
  preResizeVmState?: string;
  /** A resize's old flavor, put back by a revert. */
  preResizeFlavor?: Flavor;
}

/** A flavor's size, as a server carries it. */
export type Flavor = Pick<Server, 'vcpus' | 'ramMb' | 'diskGb'>;

export interface Migration {
  id: number;
  uuid: string;
  instanceUuid: string;
  type: MigrationType;
  status: string;
  sourceCompute: string;
  sourceNode: string | null;
  destCompute: string | null;
  destNode: string | null;
  userId: string;
  projectId: string;
  createdAt: number;
  updatedAt: number;
  /** When the server began to run on the destination (post-migrating, or its end if that was skipped). */
  landedAt?: number;
}

/** One entry of a server's action log (nova/objects/instance_action.py): what, asked by whom, in which request. */
export interface InstanceAction {
  /** nova/compute/instance_actions.py's name: create, stop, start, migrate, resize, confirmResize … */
  action: string;
  /** The request's x-openstack-request-id (its answer carried it). */
  requestId: string;
  userId: string;
  projectId: string;
  startTime: number;
}

export interface ServerGroup {
  id: string;
  name: string;
  policy: string;
  members: string[];
  projectId: string;
  userId: string;
}
